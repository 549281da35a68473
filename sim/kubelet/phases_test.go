package kubelet

import (
	"context"
	"reflect"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeKwok does kwok's part on a fake clientset: a Node that gets kwok's
// annotation is made Ready (kwok's node-initialize stage).
func fakeKwok(kc *fake.Clientset) {
	kc.PrependReactor("update", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n, ok := a.(k8stesting.UpdateAction).GetObject().(*corev1.Node)
		if ok && a.GetSubresource() == "" && n.Annotations[KwokAnnotation] == kwokValue && !nodeReady(n) {
			for i := range n.Status.Conditions {
				if n.Status.Conditions[i].Type == corev1.NodeReady {
					n.Status.Conditions[i] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}
				}
			}
		}
		return false, nil, nil
	})
}

func readyCondition(n corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// The Node registers NotReady with the kubelet's CNI message and the
// not-ready taint, not managed by kwok; after the network phase it is
// kwok's, Ready, and the taint is gone.
func TestNodeRegistersNotReadyThenGoesReady(t *testing.T) {
	ca := newCA(t, "cluster")
	r, kc := registrar(t, ca)
	r.Boot = Phases{Register: 50 * time.Millisecond, NetworkReady: 400 * time.Millisecond}
	var readyAt time.Time
	r.OnReady = func(_ Instance, at time.Time) { readyAt = at }
	w, err := kc.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	done := make(chan error, 1)
	go func() {
		done <- r.Register(context.Background(), instance("m5.large", generate(t, options(apiv1.AMIFamilyAL2023, ca))))
	}()

	var first *corev1.Node
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			first = ev.Object.(*corev1.Node)
			break
		}
	}
	rc := readyCondition(*first)
	if rc.Status != corev1.ConditionFalse || rc.Reason != ReasonKubeletNotReady || rc.Message != MessageCNINotReady {
		t.Errorf("registered with Ready %+v, want False %s %q", rc, ReasonKubeletNotReady, MessageCNINotReady)
	}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	if !hasTaint(first.Spec.Taints, notReady) {
		t.Errorf("registered with taints %v, want %v among them", first.Spec.Taints, notReady)
	}
	if _, ok := first.Annotations[KwokAnnotation]; ok {
		t.Error("kwok manages the Node from registration: it would make it Ready at once")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	if readyCondition(n).Status != corev1.ConditionTrue || n.Annotations[KwokAnnotation] != kwokValue {
		t.Errorf("after the network phase: Ready %v, annotations %v", readyCondition(n).Status, n.Annotations)
	}
	if hasTaint(n.Spec.Taints, notReady) || hasTaint(n.Spec.Taints, corev1.Taint{Key: TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("taints left: %v", n.Spec.Taints)
	}
	if readyAt.IsZero() {
		t.Error("OnReady was not called")
	}
}

// An instance terminated while it boots never registers.
func TestTerminatedWhileBootingNeverRegisters(t *testing.T) {
	ca := newCA(t, "cluster")
	r, kc := registrar(t, ca)
	r.Alive = func(string) bool { return false }
	if err := r.Register(context.Background(), instance("m5.large", generate(t, options(apiv1.AMIFamilyAL2023, ca)))); err != nil {
		t.Fatal(err)
	}
	if ns := nodes(t, kc); len(ns) != 0 {
		t.Fatalf("%d nodes for a terminated instance", len(ns))
	}
}

// A Node deleted during the network phase (its instance going away) is
// not brought back, and Register ends without error.
func TestNodeDeletedBeforeReadyStaysDeleted(t *testing.T) {
	ca := newCA(t, "cluster")
	r, kc := registrar(t, ca)
	r.Boot = Phases{NetworkReady: 300 * time.Millisecond}
	inst := instance("m5.large", generate(t, options(apiv1.AMIFamilyAL2023, ca)))
	done := make(chan error, 1)
	go func() { done <- r.Register(context.Background(), inst) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(nodes(t, kc)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := kc.CoreV1().Nodes().Delete(context.Background(), inst.PrivateDNSName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ns := nodes(t, kc); len(ns) != 0 {
		t.Errorf("%d nodes after deletion", len(ns))
	}
}

// A Node deleted while it registers is not made again: deleted between
// its creation and the cloud node manager's first read of it, or together
// with a failed update (after which the step is retried).
func TestNodeDeletedAsItRegistersStaysDeleted(t *testing.T) {
	for _, c := range []struct {
		verb string
		err  error // what the step answers after the deletion (nil: it goes on)
	}{{"get", nil}, {"update", apierrors.NewServerTimeout(corev1.Resource("nodes"), "update", 1)}} {
		t.Run(c.verb, func(t *testing.T) {
			ca := newCA(t, "cluster")
			r, kc := registrar(t, ca)
			inst := instance("m5.large", generate(t, options(apiv1.AMIFamilyAL2023, ca)))
			deleted := false
			kc.PrependReactor(c.verb, "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if deleted || a.GetSubresource() != "" {
					return false, nil, nil
				}
				deleted = true
				if err := kc.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("nodes"), "", inst.PrivateDNSName); err != nil {
					t.Error(err)
				}
				return c.err != nil, nil, c.err
			})
			if err := r.Register(context.Background(), inst); err != nil {
				t.Fatal(err)
			}
			if !deleted {
				t.Fatalf("the Node was never %s", c.verb)
			}
			if ns := nodes(t, kc); len(ns) != 0 {
				t.Errorf("%d nodes after deletion", len(ns))
			}
		})
	}
}

func hasTaint(ts []corev1.Taint, want corev1.Taint) bool {
	for _, t := range ts {
		if reflect.DeepEqual(t, want) {
			return true
		}
	}
	return false
}
