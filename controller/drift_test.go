package controller

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDriftConditionSetsKeepsAndRemoves(t *testing.T) {
	base := []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}}
	set, changed := driftCondition(base, "AMIDrift", "image gone")
	d := apiv1.FindCondition(set, apiv1.ConditionDrifted)
	if !changed || d == nil || d.Status != metav1.ConditionTrue || d.Reason != "AMIDrift" || len(set) != 2 {
		t.Fatalf("set: %+v changed=%v", set, changed)
	}
	if _, changed := driftCondition(set, "AMIDrift", "image gone"); changed {
		t.Error("the same drift rewrote the condition")
	}
	cleared, changed := driftCondition(set, "", "")
	if !changed || apiv1.FindCondition(cleared, apiv1.ConditionDrifted) != nil || len(cleared) != 1 || len(set) != 2 {
		t.Fatalf("cleared: %+v (input %d conditions) changed=%v", cleared, len(set), changed)
	}
	if _, changed := driftCondition(base, "", ""); changed {
		t.Error("no drift on an undrifted claim changed it")
	}
}
