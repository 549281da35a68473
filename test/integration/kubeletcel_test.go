//go:build integration

package integration

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeletConfigPassesThroughAndExpressionsResolvePerType: with the
// NodeClassCEL gate on, an AL2023 class with serializeImagePulls (a field
// Joinery does not type) and maxPods "min(max_pods, 30)" provisions its
// pods; the Node's pod capacity is the value resolved for its type, and
// the launch template's user data carries both. A Bottlerocket class with
// the same field is refused (ValidationSucceeded=False naming it) and
// launches nothing.
func TestKubeletConfigPassesThroughAndExpressionsResolvePerType(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.FeatureGates.NodeClassCEL = true
		c.NodeClassResync = 2 * time.Second
	})
	dc := dynamicClient(t, e)
	e.applyYAML(t, readTestdata(t, "kubelet-cel.yaml"))
	for pool, n := range map[string]int32{"cel": 3, "rocket": 1} {
		d := deployment(pool+"app", n, nil)
		d.Spec.Template.Spec.NodeSelector = map[string]string{apiv1.LabelNodePool: pool}
		d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
		if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, time.Minute, "EC2NodeClass rocket ValidationSucceeded=False", func() bool {
		c := apiv1.FindCondition(getNodeClass(t, e, dc, "rocket").Status.Conditions, apiv1.ConditionValidationSucceeded)
		return c != nil && c.Status == metav1.ConditionFalse
	})
	c := apiv1.FindCondition(getNodeClass(t, e, dc, "rocket").Status.Conditions, apiv1.ConditionValidationSucceeded)
	if !strings.Contains(c.Message, "spec.kubelet: has fields not applied by the Bottlerocket AMI family that would be silently dropped: serializeImagePulls") {
		t.Errorf("rocket ValidationSucceeded message %q does not name the field", c.Message)
	}
	e.waitRunning(t, "app=celapp", 3)

	cls := getNodeClass(t, e, dc, "cel")
	launched := 0
	for _, i := range e.w.EC2.Instances() {
		if i.Tags[apiv1.TagNodePool] == "rocket" {
			t.Errorf("instance %s launched for the refused Bottlerocket class", i.ID)
		}
		if i.Tags[apiv1.TagNodePool] != "cel" || i.State != "running" {
			continue
		}
		launched++
		checkResolvedKubelet(t, e, cls, i.InstanceType, i.PrivateDNSName, i.LaunchTemplateID)
	}
	if launched == 0 {
		t.Fatal("no running instance of NodePool cel")
	}
}

// checkResolvedKubelet: the node's pods and allocatable cpu are the
// class's expressions evaluated for its type, and its template's user data
// carries those values and the unmanaged field.
func checkResolvedKubelet(t *testing.T, e *env, cls *apiv1.EC2NodeClass, typ, nodeName, templateID string) {
	t.Helper()
	it, _ := catalog.MustDefault().Get(typ)
	k, err := it.ResolveKubelet(catalog.LaunchOf(&cls.Spec))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := k.MaxPodsCount()
	if want != 30 || k.KubeReserved["cpu"] != "200m" {
		t.Errorf("%s resolves maxPods %d, kubeReserved %v; want 30 and cpu 200m (max_pods %d, 4 vCPU)", typ, want, k.KubeReserved, it.MaxPods)
	}
	n, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, cpu := n.Status.Capacity[corev1.ResourcePods], n.Status.Allocatable[corev1.ResourceCPU]
	if pods.Value() != int64(want) || cpu.MilliValue() != int64(it.VCPU)*1000-200 {
		t.Errorf("node %s (%s) pods capacity %s, allocatable cpu %s; want %d, %dm", n.Name, typ, pods.String(), cpu.String(), want, it.VCPU*1000-200)
	}
	lt, _ := e.w.EC2.LaunchTemplate(templateID)
	ud, _ := base64.StdEncoding.DecodeString(lt.Data.UserData)
	for _, line := range []string{"serializeImagePulls: false", "maxPods: 30", "cpu: 200m"} {
		if !strings.Contains(string(ud), line) {
			t.Errorf("template %s user data lacks %q:\n%s", lt.Name, line, ud)
		}
	}
	t.Logf("%s on %s: pods %s, allocatable cpu %s, template %s", n.Name, typ, pods.String(), cpu.String(), lt.Name)
}
