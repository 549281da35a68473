//go:build integration

package integration

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEFANetworkInterfaces: a class with spec.networkInterfaces (a primary
// ENA interface, an efa-only one on card 0 device 1) gets a pod asking for
// vpc.amazonaws.com/efa a node of the cheapest type that takes the
// interfaces (a c5n.9xlarge; m5 has no EFA), launched from a template
// carrying them; the instance has them, the Node advertises one EFA device
// and the pods its default card's 7 addressed interfaces give, as planned.
// The API server refuses a class without the primary interface with
// Karpenter's message.
func TestEFANetworkInterfaces(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	dc := dynamicClient(t, e)
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": map[string]any{"name": "no-primary"},
		"spec": map[string]any{
			"role": "r", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"id": "subnet-1"}},
			"securityGroupSelectorTerms": []any{map[string]any{"id": "sg-1"}},
			"networkInterfaces":          []any{map[string]any{"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}},
		},
	}}
	_, err := dc.Resource(apiv1.EC2NodeClassGVR).Create(e.ctx, bad, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "networkInterfaces must include a primary interface with interfaceType='interface'") {
		t.Errorf("a class without the primary interface: %v", err)
	}

	e.applyYAML(t, readTestdata(t, "efa.yaml"))
	e.waitRunning(t, "app=mpi", 1)
	var inst simec2.Instance
	for _, i := range e.w.EC2.Instances() {
		if i.Tags[apiv1.TagNodePool] == "efa" && i.State == "running" {
			inst = i
		}
	}
	if inst.InstanceType != "c5n.9xlarge" {
		t.Fatalf("the EFA pod's instance is %q, want c5n.9xlarge (the cheapest c5n/m5 type that takes the interfaces)", inst.InstanceType)
	}
	lt, _ := e.w.EC2.LaunchTemplate(inst.LaunchTemplateID)
	var ifs []string
	for _, i := range inst.Interfaces {
		ifs = append(ifs, i.Type)
	}
	if len(lt.Data.Interfaces) != 2 || strings.Join(ifs, ",") != "interface,efa-only" || inst.Interfaces[1].PrivateIP != "" {
		t.Errorf("template interfaces %+v, instance %+v: want the primary and an addressless efa-only", lt.Data.Interfaces, inst.Interfaces)
	}
	node := e.node(t, inst.PrivateDNSName)
	efa := node.Status.Allocatable["vpc.amazonaws.com/efa"]
	pods := node.Status.Allocatable[corev1.ResourcePods]
	it, _ := catalog.MustDefault().Get("c5n.9xlarge")
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{NetworkInterfaces: []apiv1.NetworkInterface{
		{InterfaceType: apiv1.InterfaceTypeInterface}, {DeviceIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly}}}}
	planned := it.ShapeOf(catalog.LaunchOf(&cls.Spec)).Allocatable
	if efa.Value() != 1 || pods.Value() != 7*29+2 || planned[resources.Pods] != pods.Value() || planned[resources.EFA] != efa.Value() {
		t.Errorf("node %s allocatable efa %s pods %s, planned efa %d pods %d: want 1 and 205", node.Name, efa.String(), pods.String(),
			planned[resources.EFA], planned[resources.Pods])
	}
	t.Logf("launched %s %s with interfaces %+v; node %s efa %s pods %s", inst.ID, inst.InstanceType, inst.Interfaces, node.Name, efa.String(), pods.String())

	// The class without interfaces: the NodeClaim requests EFA, so its
	// template has the type's one efa interface (Karpenter's EFA path), and
	// the Node advertises it with the type's own 234 pods.
	e.waitRunning(t, "app=mpi-plain", 1)
	found := false
	for _, i := range e.w.EC2.Instances() {
		if i.Tags[apiv1.TagNodePool] != "efa-plain" || i.State != "running" {
			continue
		}
		found = true
		lt, _ := e.w.EC2.LaunchTemplate(i.LaunchTemplateID)
		n := e.node(t, i.PrivateDNSName)
		efa, pods := n.Status.Allocatable["vpc.amazonaws.com/efa"], n.Status.Allocatable[corev1.ResourcePods]
		if i.InstanceType != "c5n.9xlarge" || len(lt.Data.Interfaces) != 1 || lt.Data.Interfaces[0].Type != simec2.InterfaceTypeEFA ||
			i.EFAInterfaces() != 1 || efa.Value() != 1 || pods.Value() != 234 {
			t.Errorf("efa-plain: %s template interfaces %+v, node efa %s pods %s; want c5n.9xlarge, one efa interface, 1 and 234",
				i.InstanceType, lt.Data.Interfaces, efa.String(), pods.String())
		}
		t.Logf("efa-plain launched %s %s with interfaces %+v; node efa %s pods %s", i.ID, i.InstanceType, i.Interfaces, efa.String(), pods.String())
	}
	if !found {
		t.Error("no running instance of NodePool efa-plain")
	}
}
