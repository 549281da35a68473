package cni

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/sim/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeCloud is one instance in a subnet with free addresses, launched
// with prefixes.
type fakeCloud struct {
	mu       sync.Mutex
	typ      string
	held     []string
	prefixes []string
	free     int
	seq      int
}

func (f *fakeCloud) Prefixes(string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prefixes...)
}

func (f *fakeCloud) UnassignPrefixes(_ string, prefixes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.free += 16 * len(prefixes)
	f.prefixes = f.prefixes[:len(f.prefixes)-len(prefixes)]
}

func (f *fakeCloud) Instance(id string) (string, []string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.typ, append([]string(nil), f.held...), id == "i-1"
}

func (f *fakeCloud) AssignAddresses(_ string, n int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.free {
		return nil, fmt.Errorf("%s: not enough free addresses", ec2.CodeInsufficientFreeAddresses)
	}
	var out []string
	for range n {
		f.seq++
		out = append(out, fmt.Sprintf("10.0.0.%d", f.seq+4))
	}
	f.free -= n
	f.held = append(f.held, out...)
	return out, nil
}

func (f *fakeCloud) UnassignAddresses(_ string, ips []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.free += len(ips)
	f.held = f.held[:len(f.held)-len(ips)]
}

func (f *fakeCloud) heldCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}

func startCNI(t *testing.T, cloud *fakeCloud, pods int, s Settings) *fake.Clientset {
	t.Helper()
	kc := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-1"}})
	for i := range pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", UID: types.UID(fmt.Sprint("uid-", i))},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
		if _, err := kc.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hostPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "aws-node", Namespace: "kube-system", UID: "uid-host"},
		Spec: corev1.PodSpec{NodeName: "n1", HostNetwork: true}}
	if _, err := kc.CoreV1().Pods("kube-system").Create(context.Background(), hostPod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	limits := func(typ string) (Limits, bool) { return Limits{ENIs: 3, IPv4PerENI: 4}, typ == "t3.small" }
	if _, err := Start(ctx, Options{Kube: kc, Cloud: cloud, Limits: limits, Settings: s}); err != nil {
		t.Fatal(err)
	}
	return kc
}

// annotated counts pods holding an address, waiting until want do (or a
// minute passes).
func annotated(t *testing.T, kc *fake.Clientset, ns string, want int) int {
	t.Helper()
	n := 0
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		pods, err := kc.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, p := range pods.Items {
			if p.Annotations[PodIPsAnnotation] != "" {
				n++
			}
		}
		if n >= want {
			return n
		}
	}
	return n
}

func TestCNIFivePodsOnT3Small(t *testing.T) {
	cloud := &fakeCloud{typ: "t3.small", free: 100}
	kc := startCNI(t, cloud, 5, Settings{})
	if n := annotated(t, kc, "default", 5); n != 5 {
		t.Fatalf("%d of 5 pods got an address", n)
	}
	// 3 ENIs, 9 secondaries: 11 addresses beyond the instance's own.
	for end := time.Now().Add(time.Minute); cloud.heldCount() != 11 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := cloud.heldCount(); got != 11 {
		t.Errorf("instance holds %d addresses beyond its own, want 11 (2 ENI primaries + 9 secondaries)", got)
	}
	if n := annotated(t, kc, "kube-system", 0); n != 0 {
		t.Errorf("a hostNetwork pod got a pod address")
	}
}

func TestCNISubnetRunsDry(t *testing.T) {
	cloud := &fakeCloud{typ: "t3.small", free: 3} // the primary ENI's secondaries, no second ENI
	kc := startCNI(t, cloud, 5, Settings{})
	if n := annotated(t, kc, "default", 3); n != 3 {
		t.Fatalf("%d pods got an address, want the 3 the subnet had", n)
	}
	var evs *corev1.EventList
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var err error
		if evs, err = kc.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) >= 2 {
			break
		}
	}
	if len(evs.Items) != 2 {
		t.Fatalf("%d events, want FailedCreatePodSandBox for each of the 2 pods left", len(evs.Items))
	}
	for _, e := range evs.Items {
		if e.Reason != "FailedCreatePodSandBox" || e.Type != corev1.EventTypeWarning || e.Source.Component != "kubelet" ||
			!strings.Contains(e.Message, "failed to assign an IP address to container") {
			t.Errorf("event %s %s %s: %q", e.Type, e.Reason, e.Source.Component, e.Message)
		}
	}
	if n := annotated(t, kc, "default", 0); n != 3 {
		t.Errorf("%d pods hold an address, want 3", n)
	}
	pods, err := kc.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	creating := 0
	for _, p := range pods.Items {
		if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "ContainerCreating" && p.Annotations[PodIPsAnnotation] == "" {
			creating++
		}
	}
	if creating != 2 {
		t.Errorf("%d pods without an address show ContainerCreating, want 2", creating)
	}
}

// waitHeld waits (a minute at most) until the instance holds n addresses
// beyond its own, and returns what it holds.
func waitHeld(cloud *fakeCloud, n int) int {
	for end := time.Now().Add(time.Minute); cloud.heldCount() != n && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	return cloud.heldCount()
}

// Pods gone: their addresses cool down, then the ENIs beyond the warm
// target go back to the subnet; the primary ENI's secondaries stay.
func TestCNIGivesAddressesBack(t *testing.T) {
	cloud := &fakeCloud{typ: "t3.small", free: 100}
	kc := startCNI(t, cloud, 5, Settings{IPCooldown: 200 * time.Millisecond})
	if n := annotated(t, kc, "default", 5); n != 5 {
		t.Fatalf("%d of 5 pods got an address", n)
	}
	if got := waitHeld(cloud, 11); got != 11 {
		t.Fatalf("holds %d, want 11 with 5 pods", got)
	}
	for i := range 5 {
		if err := kc.CoreV1().Pods("default").Delete(context.Background(), fmt.Sprintf("p%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := waitHeld(cloud, 3); got != 3 {
		t.Errorf("holds %d after the pods went and cooled down, want the primary ENI's 3 secondaries", got)
	}
	cloud.mu.Lock()
	free := cloud.free
	cloud.mu.Unlock()
	if free != 100-3 {
		t.Errorf("subnet has %d free, want 97", free)
	}
}
