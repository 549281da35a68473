package cni

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Without prefix delegation ipamd gives the prefixes the instance was
// launched with back when it starts, and pods get secondary addresses.
func TestCNIWithoutPrefixDelegationGivesLaunchPrefixesBack(t *testing.T) {
	cloud := &fakeCloud{typ: "t3.small", free: 100, prefixes: []string{"10.0.1.16/28", "10.0.1.32/28"}}
	kc := startCNI(t, cloud, 2, Settings{})
	if n := annotated(t, kc, "default", 2); n != 2 {
		t.Fatalf("%d of 2 pods got an address", n)
	}
	cloud.mu.Lock()
	left, free, held := len(cloud.prefixes), cloud.free, len(cloud.held)
	cloud.mu.Unlock()
	if left != 0 || free != 100+32-held {
		t.Errorf("%d prefixes kept, subnet %d free (held %d)", left, free, held)
	}
	for _, ip := range podIPs(t, kc) {
		if strings.HasPrefix(ip, "10.0.1.") {
			t.Errorf("pod got %s, an address of a prefix given back", ip)
		}
	}
}

// With prefix delegation the launch's prefixes are the node's first pod
// addresses, and stay with the node when its pods go.
func TestCNIWithPrefixDelegationUsesLaunchPrefixes(t *testing.T) {
	cloud := &fakeCloud{typ: "t3.small", free: 100, prefixes: []string{"10.0.1.16/28"}}
	kc := startCNI(t, cloud, 5, Settings{PrefixDelegation: true, IPCooldown: 100 * time.Millisecond})
	if n := annotated(t, kc, "default", 5); n != 5 {
		t.Fatalf("%d of 5 pods got an address", n)
	}
	for _, ip := range podIPs(t, kc) {
		if !strings.HasPrefix(ip, "10.0.1.") {
			t.Errorf("pod got %s, not an address of the launch's prefix 10.0.1.16/28", ip)
		}
	}
	for i := range 5 {
		if err := kc.CoreV1().Pods("default").Delete(context.Background(), fmt.Sprintf("p%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// WARM_PREFIX_TARGET 1 wants one free prefix: the one ipamd added for
	// the warm target goes back, the launch's prefix stays.
	if got := waitHeld(cloud, 0); got != 0 {
		t.Errorf("holds %d assigned addresses after the pods went, want 0", got)
	}
	cloud.mu.Lock()
	defer cloud.mu.Unlock()
	if len(cloud.prefixes) != 1 {
		t.Errorf("launch prefixes %v, want the one kept", cloud.prefixes)
	}
}

// podIPs are the addresses the CNI gave the default namespace's pods.
func podIPs(t *testing.T, kc *fake.Clientset) []string {
	t.Helper()
	pods, err := kc.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if ip := p.Annotations[PodIPsAnnotation]; ip != "" {
			out = append(out, ip)
		}
	}
	return out
}
