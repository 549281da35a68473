//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An invalid NodePool and a pod no instance type can hold are reported
// (Events with the field and reason), and the rest is still provisioned.
func TestBadInputIsReportedAndTheRestIsProvisioned(t *testing.T) {
	e := startEnv(t)
	objs, err := cluster.ReadManifests("../../examples/nodepools.yaml", "testdata/bad-input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Apply(e.ctx, e.w.Kube.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
	var small int
	var hugeEvent, poolEvent string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=small"})
		if err != nil {
			t.Fatal(err)
		}
		small = 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				small++
			}
		}
		evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.Source.Component != "joinery" {
				continue
			}
			if ev.InvolvedObject.Kind == "Pod" && ev.InvolvedObject.Name == "huge" && ev.Reason == "FailedScheduling" {
				hugeEvent = ev.Message
			}
			if ev.InvolvedObject.Kind == "NodePool" && ev.InvolvedObject.Name == "broken" && ev.Reason == "InvalidNodePool" {
				poolEvent = ev.Message
			}
		}
		if small == 3 && hugeEvent != "" && poolEvent != "" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if small != 3 {
		t.Errorf("%d/3 small pods Running", small)
	}
	if !strings.Contains(hugeEvent, "cpu") {
		t.Errorf("huge pod event = %q, want a reason naming cpu", hugeEvent)
	}
	if !strings.Contains(poolEvent, "spec.template.spec.requirements[0].values[0]") || !strings.Contains(poolEvent, "integer") {
		t.Errorf("NodePool event = %q, want the field and reason", poolEvent)
	}
	huge, err := e.kc.CoreV1().Pods("default").Get(e.ctx, "huge", metav1.GetOptions{})
	if err != nil || huge.Spec.NodeName != "" {
		t.Errorf("huge pod should stay pending: %v %q", err, huge.Spec.NodeName)
	}
	t.Logf("huge: %s", hugeEvent)
	t.Logf("broken: %s", poolEvent)
}
