//go:build integration

package integration

import (
	"strconv"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An m5.xlarge whose kernel reports 6% less memory than the 7.5% estimate
// leaves (the local kubelet told so per type): Joinery plans four 3400Mi
// pods a node (14162Mi allocatable by the estimate), the nodes hold three
// (13252Mi), and the two left over get one more node, planned with the
// memory the first nodes reported. Eight more pods then get, in one wave,
// what the learned size says (one on the third node, three new nodes):
// no NodeClaim waits for a new node to register and fall short. The
// learned value is in the shared ConfigMap.
func TestLearnedNodeSize(t *testing.T) {
	parallel(t)
	m5, _ := catalog.MustDefault().Get("m5.xlarge")
	estimate := m5.ShapeOf(catalog.LaunchOf(nil)).Capacity[resources.Memory] >> 20
	reported := estimate * 94 / 100
	e := startEnvWorld(t, func(o *world.Options) { o.NodeMemTotalMiB = map[string]int64{"m5.xlarge": reported} }, true)
	e.applyWithDefaultClass(t, "testdata/learnedsize.yaml")

	d := deployment("sized", 8, nil)
	d.Spec.Template.Spec.NodeSelector = map[string]string{apiv1.LabelNodePool: "sized"}
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("3400Mi")}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRunning(t, "app=sized", 8)
	before := map[string]bool{}
	for _, nc := range e.poolClaims(t, "sized") {
		before[nc.Name] = true
	}
	if len(before) != 3 {
		t.Errorf("after 8 pods: %d NodeClaims, want 3 (2 planned by the estimate, 1 for the pods they could not hold)", len(before))
	}
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=sized"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	if got := nodes.Items[0].Status.Capacity.Memory().Value() >> 20; got != reported {
		t.Errorf("node memory capacity %d MiB, want the %d MiB the kernel reports", got, reported)
	}

	// Eight more: one fits on the third node, seven need three nodes of
	// three (the estimate would say two of four, then one more).
	e.scaleDeployment(t, "sized", 16)
	e.waitRunning(t, "app=sized", 16)
	var added []*apiv1.NodeClaim
	firstRegistered := time.Time{}
	for _, nc := range e.poolClaims(t, "sized") {
		if before[nc.Name] {
			continue
		}
		added = append(added, nc)
		if c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionRegistered); c != nil && c.Status == metav1.ConditionTrue &&
			(firstRegistered.IsZero() || c.LastTransitionTime.Time.Before(firstRegistered)) {
			firstRegistered = c.LastTransitionTime.Time
		}
	}
	if len(added) != 3 {
		t.Errorf("after 16 pods: %d more NodeClaims, want 3", len(added))
	}
	for _, nc := range added {
		if nc.CreationTimestamp.Time.After(firstRegistered) {
			t.Errorf("NodeClaim %s created at %s, after the first of the new nodes registered (%s): a second wave, planned by the estimate", nc.Name, nc.CreationTimestamp.Time, firstRegistered)
		}
	}
	waitFor(t, time.Minute, "the learned size in ConfigMap "+sharedstate.NodeMemoryConfigMap, func() bool {
		cm, err := e.kc.CoreV1().ConfigMaps("default").Get(e.ctx, sharedstate.NodeMemoryConfigMap, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for k, v := range cm.Data {
			if b, _ := strconv.ParseInt(v, 10, 64); len(k) > 10 && k[:10] == "m5.xlarge_" && b == reported<<20 {
				return true
			}
		}
		return false
	})
}

// waitRunning waits (4 min) until n pods of selector run.
func (e *env) waitRunning(t *testing.T, selector string, n int) {
	t.Helper()
	e.waitRunningWithin(t, selector, n, 4*time.Minute)
}

// waitRunningWithin waits until n pods of selector run.
func (e *env) waitRunningWithin(t *testing.T, selector string, n int, within time.Duration) {
	t.Helper()
	waitFor(t, within, strconv.Itoa(n)+" pods "+selector+" Running", func() bool {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == n
	})
}
