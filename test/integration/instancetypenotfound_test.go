//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/disruption"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestInstanceTypeNotFoundOnIPPrefixCount: raising the class's
// ipPrefixCount to 10 leaves its m5.large node (10 IPv4 slots per
// interface: no room for 10 prefixes and the primary address) a type the
// class can no longer launch. ipPrefixCount is not in the class's hash,
// so only the instance-type check catches it: the NodeClaim is
// Drifted=True for InstanceTypeNotFound, naming the type and the class.
func TestInstanceTypeNotFoundOnIPPrefixCount(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.NodeClassResync = 2 * time.Second })
	dc := dynamicClient(t, e)
	e.applyYAML(t, readTestdata(t, "ipprefix.yaml"))
	d := deployment("itnf", 1, nil)
	d.Spec.Template.Spec.NodeSelector = map[string]string{apiv1.LabelNodePool: "prefixes"}
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRunning(t, "app=itnf", 1)
	// Not drifted while the class still launches m5.large.
	for _, nc := range e.nodeClaimObjs(t, dc) {
		if c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted); c != nil && c.Status == metav1.ConditionTrue {
			t.Fatalf("NodeClaim %s drifted before the change: %s %s", nc.Name, c.Reason, c.Message)
		}
	}

	patch := []byte(`{"spec":{"ipPrefixCount":10}}`)
	if _, err := dc.Resource(apiv1.EC2NodeClassGVR).Patch(e.ctx, "prefixes", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the prefixes NodeClaim Drifted=True (InstanceTypeNotFound)", func() bool {
		for _, nc := range e.nodeClaimObjs(t, dc) {
			c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted)
			if nc.Labels[apiv1.LabelNodePool] != "prefixes" || c == nil || c.Status != metav1.ConditionTrue {
				continue
			}
			if c.Reason != disruption.ReasonInstanceTypeNotFound || !strings.Contains(c.Message, "instance type m5.large is no longer offered to EC2NodeClass prefixes") {
				t.Fatalf("NodeClaim %s drifted for %s: %s", nc.Name, c.Reason, c.Message)
			}
			t.Logf("NodeClaim %s: %s %s", nc.Name, c.Reason, c.Message)
			return true
		}
		return false
	})
}
