//go:build integration

package integration

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/disruption"
	simec2 "github.com/joinery/joinery/sim/ec2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestNestedVirtualizationClassLaunches: an EC2NodeClass with
// cpuOptions.nestedVirtualization enabled gets its pod a node of a type
// that supports it (the controller learns which from the local
// DescribeInstanceTypes), launched from a template carrying CpuOptions, and
// the instance runs with it. Switching the class to disabled drifts the
// node (NodeClassDrift); its replacement runs with it disabled.
func TestNestedVirtualizationClassLaunches(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.NodeClassResync = 2 * time.Second
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	dc := dynamicClient(t, e)
	e.applyYAML(t, readTestdata(t, "nested-pool.yaml"))
	running := func() []simec2.Instance {
		var out []simec2.Instance
		for _, i := range e.w.EC2.Instances() {
			if i.Tags[apiv1.TagNodePool] == "nested" && i.State == "running" {
				out = append(out, i)
			}
		}
		return out
	}
	waitFor(t, 3*time.Minute, "the vm pod Running", func() bool { n, _ := e.readyPods("app=vm"); return n == 1 && len(running()) == 1 })
	first := running()[0]
	it, ok := catalog.MustDefault().Get(first.InstanceType)
	if !ok || !it.NestedVirtualization {
		t.Errorf("the pod's node is a %s, which does not support nested virtualization", first.InstanceType)
	}
	lt, _ := e.w.EC2.LaunchTemplate(first.LaunchTemplateID)
	if first.NestedVirtualization != apiv1.NestedVirtualizationEnabled || lt.Data.NestedVirtualization != apiv1.NestedVirtualizationEnabled {
		t.Errorf("instance %s (%s) nested virtualization %q, template %q: want enabled", first.ID, first.InstanceType,
			first.NestedVirtualization, lt.Data.NestedVirtualization)
	}
	t.Logf("launched %s %s with nested virtualization %s", first.ID, first.InstanceType, first.NestedVirtualization)

	patch := []byte(`{"spec":{"cpuOptions":{"nestedVirtualization":"disabled"}}}`)
	if _, err := dc.Resource(apiv1.EC2NodeClassGVR).Patch(e.ctx, "nested", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the nested NodeClaim Drifted=True (NodeClassDrift), or already replaced", func() bool {
		for _, nc := range e.nodeClaimObjs(t, dc) {
			d := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted)
			if nc.Labels[apiv1.LabelNodePool] == "nested" && d != nil && d.Status == metav1.ConditionTrue {
				if d.Reason != disruption.ReasonNodeClassDrift {
					t.Fatalf("NodeClaim %s drifted for %s: %s", nc.Name, d.Reason, d.Message)
				}
				return true
			}
		}
		r := running()
		return len(r) == 1 && r[0].ID != first.ID
	})
	waitFor(t, 4*time.Minute, "the vm pod on a replacement with nested virtualization disabled", func() bool {
		n, _ := e.readyPods("app=vm")
		r := running()
		return n == 1 && len(r) == 1 && r[0].ID != first.ID && r[0].NestedVirtualization == apiv1.NestedVirtualizationDisabled
	})
	t.Logf("replaced by %s %s with nested virtualization %s", running()[0].ID, running()[0].InstanceType, running()[0].NestedVirtualization)
}
