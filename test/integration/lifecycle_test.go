//go:build integration

package integration

import (
	"os"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/test/history"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// One world, the worker as its own process. A pod selecting the NodePool's
// template label runs on the first node bought for it. Then the node
// holding most lc-web pods is ended three ways, the PDB (minAvailable 8 of
// 10) sampled throughout: `kubectl delete nodeclaim`; `kubectl delete node`
// with a VolumeAttachment on it and the worker SIGKILLed mid-drain (the
// instance stays until the attachment is gone); `kubectl delete nodepool`
// (the garbage collector deletes its NodeClaims). Each ends with the pods
// Ready elsewhere, the instance terminated at the EC2 endpoint, and the
// Node and NodeClaim gone (their finalizers removed).
func TestDeletionRunsTheNodesTermination(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	w := e.startWorker(t)
	objs := readManifests(t, "../../examples/nodepools.yaml", "testdata/lifecycle.yaml")
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "NodePool" && o.GetName() == "general-purpose" {
			// lifecycle (weight 100) is preferred; general-purpose takes the pods once it is gone.
			if err := unstructured.SetNestedField(o.Object, int64(10), "spec", "weight"); err != nil {
				t.Fatal(err)
			}
		}
		if o.GetKind() != "NodePool" || o.GetName() == "general-purpose" || o.GetName() == "lifecycle" {
			keep = append(keep, o)
		}
	}
	e.apply(t, keep)
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ready := func() (int, map[string]int) { return e.readyPods("app=lc-web") }
	waitFor(t, 3*time.Minute, "10 lc-web pods and lc-selector Ready", func() bool {
		n, _ := ready()
		p, err := e.kc.CoreV1().Pods("default").Get(e.ctx, "lc-selector", metav1.GetOptions{})
		return n == 10 && err == nil && p.Status.Phase == corev1.PodRunning
	})
	sel, _ := e.kc.CoreV1().Pods("default").Get(e.ctx, "lc-selector", metav1.GetOptions{})
	selNode, _ := e.kc.CoreV1().Nodes().Get(e.ctx, sel.Spec.NodeName, metav1.GetOptions{})
	if selNode.Labels["team"] != "lifecycle" || selNode.Labels[apiv1.LabelNodePool] != "lifecycle" || !hasFinalizer(selNode.Finalizers) {
		t.Errorf("lc-selector's node %s: labels %v finalizers %v", selNode.Name, selNode.Labels, selNode.Finalizers)
	}
	// The pod selecting the template label was placed once: one node bought.
	evs, _ := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=lc-selector,reason=Nominated"})
	nominated := int32(0)
	for _, ev := range evs.Items {
		nominated += ev.Count
	}
	if nominated != 1 {
		t.Errorf("lc-selector nominated %d times, want 1 (a second node was bought for it)", nominated)
	}
	// A bare pod: the drains below would evict it for good.
	if err := e.kc.CoreV1().Pods("default").Delete(e.ctx, "lc-selector", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	e.waitPDBAllows(t, "lc-web", 2)
	sampler := sampleMinReady(ready, 10)
	defer sampler.Stop()

	// busiest returns the node with most lc-web pods, its NodeClaim and instance.
	busiest := func() (node, claim, instance string) {
		_, byNode := ready()
		node, most := busiestNode(byNode)
		for _, nc := range e.nodeClaims(t) {
			u := nc.(*unstructured.Unstructured)
			if name, _, _ := unstructured.NestedString(u.Object, "status", "nodeName"); name == node {
				claim = u.GetName()
				pid, _, _ := unstructured.NestedString(u.Object, "status", "providerID")
				instance = pid[strings.LastIndex(pid, "/")+1:]
			}
		}
		if claim == "" {
			t.Fatalf("no NodeClaim for node %s", node)
		}
		t.Logf("target %s (%d lc-web pods), NodeClaim %s, instance %s", node, most, claim, instance)
		return node, claim, instance
	}
	ended := func(how, node, claim, instance string) {
		t.Helper()
		waitFor(t, 4*time.Minute, how+": Node and NodeClaim gone, instance terminated", func() bool {
			_, nerr := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
			_, cerr := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, claim, metav1.GetOptions{})
			return apierrors.IsNotFound(nerr) && apierrors.IsNotFound(cerr) && instanceState(e, instance) == "terminated"
		})
		waitFor(t, 3*time.Minute, how+": 10 lc-web pods Ready again", func() bool { n, _ := ready(); return n == 10 })
		t.Logf("%s: ended; min Ready so far %d", how, sampler.Min())
	}

	// 1. kubectl delete nodeclaim.
	node, claim, inst := busiest()
	if err := dc.Resource(apiv1.NodeClaimGVR).Delete(e.ctx, claim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ended("delete nodeclaim", node, claim, inst)
	if os.Getenv("JOINERY_RECORD_HISTORIES") == "1" {
		// The new ending of a node's life, for the replay test.
		if err := history.Save(e.ctx, e.tc, workflows.NodeClaimWorkflowID(claim), "../../workflows/testdata/histories", "nodeclaim-deleted"); err != nil {
			t.Errorf("record: %v", err)
		}
	}

	// 2. kubectl delete node, a volume attached, the worker SIGKILLed mid-drain.
	node, claim, inst = busiest()
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-lc-test"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: strPtr("pv-lc-test")}}}
	if _, err := e.kc.StorageV1().VolumeAttachments().Create(e.ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.kc.CoreV1().Nodes().Delete(e.ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	id := workflows.NodeClaimWorkflowID(claim)
	phase := func() string {
		st, _ := queryStatus[workflows.NodeClaimStatus](e, id)
		return st.Phase
	}
	waitFor(t, 2*time.Minute, "phase Draining", func() bool { return phase() == workflows.PhaseDraining })
	_, byNode := ready()
	w.kill()
	t.Logf("worker SIGKILLed while %s drains (%d lc-web pods Ready on it)", node, byNode[node])
	w = e.startWorker(t)
	waitFor(t, 3*time.Minute, "the termination waiting for the VolumeAttachment", func() bool {
		d, err := e.tc.DescribeWorkflowExecution(e.ctx, id, "")
		if err != nil {
			return false
		}
		for _, a := range d.PendingActivities {
			if a.ActivityType.GetName() == workflows.ActivityWaitVolumesDetached {
				return true
			}
		}
		return false
	})
	if s := instanceState(e, inst); s != "running" {
		t.Errorf("instance %s is %s while a volume is still attached to its node", inst, s)
	}
	if n, err := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{}); err != nil || n.DeletionTimestamp == nil {
		t.Errorf("node %s should be terminating and held by the finalizer: %v", node, err)
	}
	if err := e.kc.StorageV1().VolumeAttachments().Delete(e.ctx, va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ended("delete node", node, claim, inst)

	// 3. kubectl delete nodepool: its NodeClaims go through the garbage collector.
	var poolNodes []string
	nodes, _ := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=lifecycle"})
	for _, n := range nodes.Items {
		poolNodes = append(poolNodes, n.Name)
	}
	var poolInstances []string
	for _, in := range e.w.EC2.Instances() {
		if in.Tags[apiv1.TagNodePool] == "lifecycle" && in.State == "running" {
			poolInstances = append(poolInstances, in.ID)
		}
	}
	t.Logf("deleting NodePool lifecycle: nodes %v, instances %v", poolNodes, poolInstances)
	if err := dc.Resource(apiv1.NodePoolGVR).Delete(e.ctx, "lifecycle", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, "the pool's nodes, NodeClaims and instances gone", func() bool {
		for _, n := range poolNodes {
			if _, err := e.kc.CoreV1().Nodes().Get(e.ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		for _, nc := range e.nodeClaims(t) {
			if nc.GetLabels()[apiv1.LabelNodePool] == "lifecycle" {
				return false
			}
		}
		for _, id := range poolInstances {
			if instanceState(e, id) != "terminated" {
				return false
			}
		}
		return true
	})
	waitFor(t, 3*time.Minute, "10 lc-web pods Ready on general-purpose", func() bool {
		n, byNode := ready()
		if n != 10 {
			return false
		}
		for name := range byNode {
			if nd, err := e.kc.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{}); err != nil || nd.Labels[apiv1.LabelNodePool] != "general-purpose" {
				return false
			}
		}
		return true
	})
	minReady := sampler.Min()
	t.Logf("min lc-web pods Ready across the three deletions: %d", minReady)
	if minReady < 8 {
		t.Errorf("PDB violated: only %d lc-web pods Ready at one moment (minAvailable 8)", minReady)
	}
	_ = w
}

func instanceState(e *env, id string) string {
	for _, in := range e.w.EC2.Instances() {
		if in.ID == id {
			return in.State
		}
	}
	return ""
}

func hasFinalizer(fins []string) bool {
	for _, f := range fins {
		if f == apiv1.FinalizerTermination {
			return true
		}
	}
	return false
}

func strPtr(s string) *string { return &s }
