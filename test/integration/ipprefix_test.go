//go:build integration

package integration

import (
	"net"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/sim/cni"
	"github.com/joinery/joinery/sim/world"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A class with spec.ipPrefixCount 2 launches its node from a template
// whose primary interface asks for 2 IPv4 prefixes; EC2 delegates two /28s
// of the subnet; the VPC CNI (prefix delegation on) gives the pods
// addresses from them; the Node's pods allocatable is the ENI-limited 29 of
// an m5.large, as Karpenter plans it and nodeadm computes it.
func TestIPPrefixCountLaunchesWithPrefixes(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) { o.CNI = cni.Settings{PrefixDelegation: true} }, true)
	subnetA := e.w.EC2.SubnetIDs()[0]
	before := e.w.EC2.SubnetAvailable(subnetA)
	e.applyYAML(t, readTestdata(t, "ipprefix.yaml"))
	d := deployment("pfx", 3, nil)
	d.Spec.Template.Spec.NodeSelector = map[string]string{apiv1.LabelNodePool: "prefixes"}
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRunning(t, "app=pfx", 3)

	var nodeName string
	var prefixes []*net.IPNet
	for _, i := range e.w.EC2.Instances() {
		if i.Tags[apiv1.TagNodePool] != "prefixes" || i.State != "running" {
			continue
		}
		nodeName = i.PrivateDNSName
		lt, _ := e.w.EC2.LaunchTemplate(i.LaunchTemplateID)
		if c := lt.Data.IPv4PrefixCount; c == nil || *c != 2 {
			t.Errorf("template %s Ipv4PrefixCount %v, want 2", lt.Name, c)
		}
		if len(i.IPv4Prefixes) != 2 || i.SubnetID != subnetA {
			t.Fatalf("instance %s in %s holds prefixes %v, want 2 in %s", i.ID, i.SubnetID, i.IPv4Prefixes, subnetA)
		}
		for _, p := range i.IPv4Prefixes {
			_, n, err := net.ParseCIDR(p)
			if err != nil {
				t.Fatal(err)
			}
			prefixes = append(prefixes, n)
		}
	}
	if nodeName == "" {
		t.Fatal("no running instance of NodePool prefixes")
	}
	if used := before - e.w.EC2.SubnetAvailable(subnetA); used < 1+2*16 {
		t.Errorf("the subnet gave %d addresses, want at least the primary's and two /28s' 33", used)
	}
	n, err := e.kc.CoreV1().Nodes().Get(e.ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pods := n.Status.Allocatable[corev1.ResourcePods]; pods.Value() != 29 {
		t.Errorf("node %s allocatable pods %s, want 29 (an m5.large's ENI-limited count)", n.Name, pods.String())
	}
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=pfx"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		ip := net.ParseIP(p.Annotations[cni.PodIPsAnnotation])
		if ip == nil || !(prefixes[0].Contains(ip) || prefixes[1].Contains(ip)) {
			t.Errorf("pod %s address %q is not in the node's prefixes %v", p.Name, p.Annotations[cni.PodIPsAnnotation], prefixes)
		}
	}
}
