package replay

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A recorded interruption falls on a spot node of the same type when the
// replay has one, else on the first other; never on a node already being
// drained.
func TestSpotVictim(t *testing.T) {
	node := func(name, typ string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelInstanceType: typ}},
			Spec: corev1.NodeSpec{Taints: taints}}
	}
	drained := corev1.Taint{Key: apiv1.TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule}
	nodes := []corev1.Node{node("c", "m5.large"), node("b", "c5.xlarge"), node("a", "m5.large", drained)}
	if got := spotVictim(nodes, "m5.large"); got != "c" {
		t.Errorf("victim %q, want c (a is being drained)", got)
	}
	if got := spotVictim(nodes, "r5.large"); got != "b" {
		t.Errorf("victim %q, want b (no r5.large: the first other)", got)
	}
	if got := spotVictim(nodes[2:], "m5.large"); got != "" {
		t.Errorf("victim %q, want none", got)
	}
}
