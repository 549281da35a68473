//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/cni"
	"github.com/joinery/joinery/sim/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Zone a's subnet holds two m5.large nodes of 20 pods (30 addresses each
// under the VPC CNI's defaults: 3 ENIs of 10) but not a third: the launch
// predicts it, leaves zone a out, and the third node goes to zone b; all 60
// pods run with addresses from their node's subnet. Without the prediction
// the third node lands in zone a and pods stay ContainerCreating. The
// EC2NodeClass gets a Warning Event and the metric shows the low subnet.
func TestSubnetAddressesSteerTheLaunch(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.MetricsAddr, c.NodeClassResync = metricsAddr, 5*time.Second
	})
	subnetA := e.w.EC2.SubnetIDs()[0]
	if err := e.w.EC2.SetSubnetAvailable(subnetA, 75); err != nil {
		t.Fatal(err)
	}
	e.applyWithDefaultClass(t, "testdata/subnets.yaml")
	d := deployment("addr", 60, nil)
	// 90m: 20 pods fill an m5.large's 1930m allocatable beside the EKS add-ons' 125m.
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("90m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRunning(t, "app=addr", 60)

	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	byZone := map[string]int{}
	for _, n := range nodes.Items {
		byZone[n.Labels[corev1.LabelTopologyZone]]++
	}
	if len(nodes.Items) != 3 || byZone["us-east-1a"] != 2 || byZone["us-east-1b"] != 1 {
		t.Errorf("nodes by zone %v, want 2 in us-east-1a (its subnet holds two) and 1 in us-east-1b", byZone)
	}
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=addr"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		ip := p.Annotations[cni.PodIPsAnnotation]
		if ip == "" || p.Status.PodIP != ip || seen[ip] {
			t.Errorf("pod %s: address %q, pod IP %q (taken twice: %v)", p.Name, ip, p.Status.PodIP, seen[ip])
		}
		seen[ip] = true
	}
	if free := e.w.EC2.SubnetAvailable(subnetA); free < 0 || free >= 30 {
		t.Errorf("subnet %s has %d free addresses, want fewer than a node's 30", subnetA, free)
	}
	checkSubnetShortEvent(t, e)
	waitFor(t, 2*time.Minute, "joinery_subnet_available_ips of "+subnetA, func() bool {
		v := scrapeAt(t, e.addr(metricsAddr), fmt.Sprintf("joinery_subnet_available_ips{subnet=%q}", subnetA))
		return v >= 0 && int(v) == e.w.EC2.SubnetAvailable(subnetA)
	})
}

// checkSubnetShortEvent finds the Warning Event on the EC2NodeClass saying
// zone a was left out.
func checkSubnetShortEvent(t *testing.T, e *env) {
	t.Helper()
	evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=EC2NodeClass"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "InsufficientFreeAddressesInSubnet" && ev.Type == corev1.EventTypeWarning && ev.InvolvedObject.Name == "default" {
			return
		}
	}
	t.Errorf("no InsufficientFreeAddressesInSubnet Warning Event on EC2NodeClass default among %d", len(evs.Items))
}

// A node whose subnet runs dry cannot attach another ENI: the pods beyond
// its addresses stay ContainerCreating with the kubelet's
// FailedCreatePodSandBox Event, and Joinery launches nothing for them (they
// are bound). Addresses coming back start them after ipamd's 120 s
// back-off, which this test does not wait for.
func TestPodsWaitForAnAddressOnADrySubnet(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	subnetA := e.w.EC2.SubnetIDs()[0]
	e.applyWithDefaultClass(t, "testdata/subnets.yaml")
	d := deployment("dry", 1, nil)
	d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1a"}
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRunning(t, "app=dry", 1)
	// The node holds 2 ENIs (20 addresses, 18 for pods) once ipamd has
	// attached its warm ENI, which a loaded machine may do after the pod
	// runs; then nothing more in the subnet.
	waitFor(t, time.Minute, "the node's warm ENI attached", func() bool {
		for _, in := range e.w.EC2.Instances() {
			if in.SubnetID == subnetA && in.State == ec2.StateRunning {
				return 1+len(in.SecondaryIPs) >= 20
			}
		}
		return false
	})
	if err := e.w.EC2.SetSubnetAvailable(subnetA, 0); err != nil {
		t.Fatal(err)
	}
	e.scaleDeployment(t, "dry", 19)
	e.waitRunning(t, "app=dry", 18)
	var stuck *corev1.Pod
	waitFor(t, time.Minute, "a pod ContainerCreating with FailedCreatePodSandBox", func() bool {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=dry"})
		if err != nil {
			return false
		}
		for i, p := range pods.Items {
			cs := p.Status.ContainerStatuses
			if p.Status.Phase == corev1.PodPending && p.Spec.NodeName != "" && len(cs) == 1 && cs[0].State.Waiting != nil &&
				cs[0].State.Waiting.Reason == "ContainerCreating" {
				stuck = &pods.Items[i]
			}
		}
		if stuck == nil {
			return false
		}
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + stuck.Name})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if ev.Reason == "FailedCreatePodSandBox" && ev.Type == corev1.EventTypeWarning &&
				strings.Contains(ev.Message, "failed to assign an IP address to container") {
				return true
			}
		}
		return false
	})
	if n, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes); err != nil || len(n.Items) != 1 {
		t.Errorf("nodes: %v (%v), want the one", n, err)
	}
}
