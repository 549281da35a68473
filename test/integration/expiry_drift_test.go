//go:build integration

package integration

import (
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// applyWithDefaultClass applies the examples' EC2NodeClass and the given
// test manifests.
func (e *env) applyWithDefaultClass(t *testing.T, files ...string) {
	t.Helper()
	objs := readManifests(t, append([]string{"../../examples/nodepools.yaml"}, files...)...)
	e.apply(t, kept(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() != "NodePool" || !fromExamples(o) }))
}

// fromExamples: the NodePools of examples/nodepools.yaml, left out.
func fromExamples(o *unstructured.Unstructured) bool {
	switch o.GetName() {
	case "general-purpose", "memory-optimized", "graviton-spot", "gpu":
		return true
	}
	return false
}

// podDeletion is the first deletion of a pod the watch saw.
type podDeletion struct {
	node              string
	at                time.Time // deletionTimestamp
	graceOnDeletion   int64     // deletionGracePeriodSeconds
	terminationGrace  int64     // spec.terminationGracePeriodSeconds
	deletionRequested time.Time // at - graceOnDeletion: when the pod was deleted (seconds)
}

// watchPodDeletions records, until stop, the first deletion of every pod
// of the default namespace matching selector.
func (e *env) watchPodDeletions(t *testing.T, selector string) (get func() map[string]podDeletion, stop func()) {
	t.Helper()
	w, err := e.kc.CoreV1().Pods("default").Watch(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]podDeletion{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.DeletionTimestamp == nil || (ev.Type != watch.Modified && ev.Type != watch.Deleted) {
				continue
			}
			mu.Lock()
			if _, dup := seen[p.Name]; !dup {
				d := podDeletion{node: p.Spec.NodeName, at: p.DeletionTimestamp.Time}
				if p.DeletionGracePeriodSeconds != nil {
					d.graceOnDeletion = *p.DeletionGracePeriodSeconds
				}
				if p.Spec.TerminationGracePeriodSeconds != nil {
					d.terminationGrace = *p.Spec.TerminationGracePeriodSeconds
				}
				d.deletionRequested = d.at.Add(-time.Duration(d.graceOnDeletion) * time.Second)
				seen[p.Name] = d
			}
			mu.Unlock()
		}
	}()
	return func() map[string]podDeletion {
			mu.Lock()
			defer mu.Unlock()
			out := map[string]podDeletion{}
			for k, v := range seen {
				out[k] = v
			}
			return out
		}, func() {
			w.Stop()
		}
}

// Issue 18: `expireAfter: 75s`, `terminationGracePeriod: 30s`, a PDB that
// allows no disruption and a do-not-disrupt pod on the node, a disruption
// budget of 0 and voluntary disruption paused. The NodeClaim is deleted
// once 75 s old anyway, with an Expired Event, and the pods the PDB
// and do-not-disrupt keep are deleted at the grace-period deadline minus
// their own grace period, not before (judged on the objects'
// timestamps); then the node and its instance go.
func TestExpirationDeletesTheNodeClaimAndDrainsByTheGracePeriod(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true)
	waitFor(t, time.Minute, "voluntary disruption paused", func() bool {
		if err := e.tc.SignalWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.SignalPauseDisruption,
			workflows.PauseRequest{Reason: "expiration must not care"}); err != nil {
			return false
		}
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		var st workflows.ConsolidationStatus
		return err == nil && v.Get(&st) == nil && st.Paused
	})
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e.applyWithDefaultClass(t, "testdata/expiration.yaml")
	waitFor(t, 3*time.Minute, "2 exp-web and 1 exp-dnd pods Ready", func() bool {
		web, _ := e.readyPods("app=exp-web")
		dnd, _ := e.readyPods("app=exp-dnd")
		return web == 2 && dnd == 1
	})
	e.waitPDBAllows(t, "exp-web", 0)
	var claim *apiv1.NodeClaim
	for _, nc := range e.nodeClaimObjs(t, dc) {
		if nc.Labels[apiv1.LabelNodePool] == "expiring" && (claim == nil || nc.CreationTimestamp.Before(&claim.CreationTimestamp)) {
			claim = nc
		}
	}
	if claim == nil {
		t.Fatal("no NodeClaim of NodePool expiring")
	}
	if claim.Spec.ExpireAfter != "75s" || claim.Spec.TerminationGracePeriod == nil || claim.Spec.TerminationGracePeriod.Duration != 30*time.Second {
		t.Fatalf("NodeClaim %s: expireAfter %q terminationGracePeriod %v, want the pool's 75s and 30s", claim.Name, claim.Spec.ExpireAfter, claim.Spec.TerminationGracePeriod)
	}
	node := claim.Status.NodeName
	_, byNode := e.readyPods("app in (exp-web, exp-dnd)")
	onNode := byNode[node]
	t.Logf("NodeClaim %s (node %s, %d of the 3 pods) created %s", claim.Name, node, onNode, claim.CreationTimestamp.UTC().Format(time.RFC3339))
	if onNode == 0 {
		t.Fatalf("no test pod on node %s: %v", node, byNode)
	}
	deletions, stop := e.watchPodDeletions(t, "app in (exp-web, exp-dnd)")
	defer stop()

	// 1. The NodeClaim is deleted at its expiry, not before.
	var deleting *apiv1.NodeClaim
	waitFor(t, 4*time.Minute, "the NodeClaim deleted at expiry", func() bool {
		u, err := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, claim.Name, metav1.GetOptions{})
		if err != nil || u.GetDeletionTimestamp() == nil {
			return false
		}
		nc := &apiv1.NodeClaim{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc) != nil {
			return false
		}
		deleting = nc
		return nc.Annotations[apiv1.AnnotationTerminationTimestamp] != ""
	})
	deleted := deleting.DeletionTimestamp.Time
	expiry := claim.CreationTimestamp.Add(75 * time.Second)
	if deleted.Before(expiry) {
		t.Errorf("NodeClaim deleted at %s, before its expiry %s", deleted, expiry)
	}
	deadline, err := time.Parse(time.RFC3339, deleting.Annotations[apiv1.AnnotationTerminationTimestamp])
	if err != nil || !deadline.Equal(deleted.Add(30*time.Second)) {
		t.Errorf("termination deadline %q (%v), want deletion %s + 30s", deleting.Annotations[apiv1.AnnotationTerminationTimestamp], err, deleted)
	}
	t.Logf("deleted %s (expiry %s), drain deadline %s", deleted.UTC().Format(time.RFC3339), expiry.UTC().Format(time.RFC3339), deadline.UTC().Format(time.RFC3339))
	evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + claim.Name + ",reason=" + controller.EventExpired})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no %s Event on NodeClaim %s (%v)", controller.EventExpired, claim.Name, err)
	} else {
		t.Logf("Event: %s", evs.Items[0].Message)
	}

	// 2. The node's pods are deleted at the deadline minus their grace
	// period: the PDB and do-not-disrupt hold them until then.
	waitFor(t, 3*time.Minute, "the node's pods deleted", func() bool {
		n := 0
		for _, d := range deletions() {
			if d.node == node {
				n++
			}
		}
		return n == onNode
	})
	for name, d := range deletions() {
		if d.node != node {
			continue
		}
		due := deadline.Add(-time.Duration(d.terminationGrace) * time.Second)
		t.Logf("pod %s: deletion requested %s (due %s), grace %ds", name, d.deletionRequested.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339), d.graceOnDeletion)
		if d.deletionRequested.Before(due) {
			t.Errorf("pod %s deleted at %s, before the deadline %s minus its grace %ds (evicted through the PDB or do-not-disrupt?)",
				name, d.deletionRequested, deadline, d.terminationGrace)
		}
	}

	// 3. Then the node, the NodeClaim and the instance go.
	waitFor(t, 3*time.Minute, "Node and NodeClaim gone", func() bool {
		_, nerr := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
		_, cerr := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, claim.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(nerr) && apierrors.IsNotFound(cerr)
	})
}

// Issue 18: editing a NodePool requirement drifts only the nodes the new
// requirement no longer admits. Two nodes of one pool, m7i and c7i; the
// family requirement goes [m7i] -> [c7i, m7i] -> [c7i]. Only the m7i node
// gets Drifted=True (RequirementsDrifted) and is replaced; the c7i node
// is never drifted and stays.
func TestRequirementEditDriftsOnlyTheNodesNoLongerAdmitted(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
	})
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e.applyWithDefaultClass(t, "testdata/drift.yaml")
	claimOf := func(family string) *apiv1.NodeClaim {
		for _, nc := range e.nodeClaimObjs(t, dc) {
			if nc.Labels[apiv1.LabelNodePool] == "drift" && nc.Labels[apiv1.LabelInstanceFamily] == family && nc.DeletionTimestamp == nil &&
				apiv1.IsConditionTrue(nc.Status.Conditions, apiv1.ConditionInitialized) {
				return nc
			}
		}
		return nil
	}
	waitFor(t, 3*time.Minute, "drift-a Ready on an m7i node", func() bool { n, _ := e.readyPods("app=drift-a"); return n == 1 && claimOf("m7i") != nil })
	m7i := claimOf("m7i")
	if m7i.Annotations[disruption.AnnotationNodePoolHashVersion] != disruption.NodePoolHashVersion {
		t.Errorf("NodeClaim %s stamped with hash version %q, want %q", m7i.Name, m7i.Annotations[disruption.AnnotationNodePoolHashVersion], disruption.NodePoolHashVersion)
	}
	setFamilies := func(families ...string) {
		t.Helper()
		var vals []interface{}
		for _, f := range families {
			vals = append(vals, f)
		}
		// The controller writes the pool's status meanwhile: retry a conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := dc.Resource(apiv1.NodePoolGVR).Get(e.ctx, "drift", metav1.GetOptions{})
			if err != nil {
				return err
			}
			reqs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "requirements")
			for _, r := range reqs {
				if m := r.(map[string]interface{}); m["key"] == apiv1.LabelInstanceFamily {
					m["values"] = vals
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, reqs, "spec", "template", "spec", "requirements"); err != nil {
				return err
			}
			_, err = dc.Resource(apiv1.NodePoolGVR).Update(e.ctx, u, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("NodePool drift: instance-family In %v", families)
	}
	// Every Drifted condition any NodeClaim of the pool shows from now on.
	var mu sync.Mutex
	drifted := map[string]string{} // claim -> reason
	w, err := dc.Resource(apiv1.NodeClaimGVR).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			nc := &apiv1.NodeClaim{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc) != nil {
				continue
			}
			if c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted); c != nil && c.Status == metav1.ConditionTrue {
				mu.Lock()
				drifted[nc.Name] = c.Reason + ": " + c.Message
				mu.Unlock()
			}
		}
	}()

	// [m7i] -> [c7i, m7i]: both families admitted; a c7i node for drift-b.
	setFamilies("c7i", "m7i")
	b := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]interface{}{"name": "drift-b", "namespace": "default"},
		"spec": map[string]interface{}{"replicas": int64(1), "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "drift-b"}},
			"template": map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "drift-b"}},
				"spec": map[string]interface{}{
					"nodeSelector": map[string]interface{}{"team": "drift", apiv1.LabelInstanceFamily: "c7i"},
					"containers": []interface{}{map[string]interface{}{"name": "app", "image": "public.ecr.aws/nginx/nginx:alpine",
						"resources": map[string]interface{}{"requests": map[string]interface{}{"cpu": "1", "memory": "512Mi"}}}}}}}}}
	e.apply(t, []*unstructured.Unstructured{b})
	waitFor(t, 3*time.Minute, "drift-b Ready on a c7i node", func() bool { n, _ := e.readyPods("app=drift-b"); return n == 1 && claimOf("c7i") != nil })
	c7i := claimOf("c7i")
	t.Logf("nodes: m7i %s (NodeClaim %s), c7i %s (NodeClaim %s)", m7i.Status.NodeName, m7i.Name, c7i.Status.NodeName, c7i.Name)

	// [c7i, m7i] -> [c7i]: the m7i node drifts and is replaced.
	setFamilies("c7i")
	waitFor(t, 2*time.Minute, "the m7i NodeClaim Drifted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return drifted[m7i.Name] != ""
	})
	mu.Lock()
	reason := drifted[m7i.Name]
	mu.Unlock()
	t.Logf("NodeClaim %s: Drifted %s", m7i.Name, reason)
	want := disruption.ReasonRequirementsDrifted + ": label karpenter.k8s.aws/instance-family=m7i is not admitted by NodePool drift's requirement karpenter.k8s.aws/instance-family In [c7i]"
	if reason != want {
		t.Errorf("Drifted %q, want %q", reason, want)
	}
	waitFor(t, 4*time.Minute, "the m7i node replaced: NodeClaim gone, drift-a Ready on a c7i node", func() bool {
		if _, err := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, m7i.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false
		}
		n, byNode := e.readyPods("app=drift-a")
		if n != 1 {
			return false
		}
		for name := range byNode {
			nd, err := e.kc.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
			return err == nil && nd.Labels[apiv1.LabelInstanceFamily] == "c7i"
		}
		return false
	})
	// The c7i node was never drifted, and still serves drift-b.
	mu.Lock()
	if r, ok := drifted[c7i.Name]; ok {
		t.Errorf("the c7i NodeClaim %s was marked Drifted: %s", c7i.Name, r)
	}
	for name, r := range drifted {
		if name != m7i.Name {
			t.Errorf("NodeClaim %s also marked Drifted: %s", name, r)
		}
	}
	mu.Unlock()
	now, err := dc.Resource(apiv1.NodeClaimGVR).Get(e.ctx, c7i.Name, metav1.GetOptions{})
	if err != nil || now.GetDeletionTimestamp() != nil || now.GetUID() != types.UID(c7i.UID) {
		t.Errorf("the c7i NodeClaim %s is gone or going: %v", c7i.Name, err)
	}
	if _, byNode := e.readyPods("app=drift-b"); byNode[c7i.Status.NodeName] != 1 {
		t.Errorf("drift-b no longer on the c7i node %s: %v", c7i.Status.NodeName, byNode)
	}
	// The decision is recorded once its DrainAndReplace has ended, which
	// can be a moment after the node is gone.
	var st workflows.ConsolidationStatus
	waitFor(t, time.Minute, "the drift decision recorded", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil {
			return false
		}
		for _, r := range st.History {
			if r.Decision.Method == saga.MethodDrift {
				return true
			}
		}
		return false
	})
	for _, r := range st.History {
		t.Logf("decision %s %v (%s) -> %s", r.Decision.Method, r.Decision.Nodes, r.Decision.Why, r.Outcome)
		if r.Decision.Method == saga.MethodDrift && (len(r.Decision.Nodes) != 1 || r.Decision.Nodes[0] != m7i.Status.NodeName || r.Decision.NodePool != "drift") {
			t.Errorf("drift decided on %v of %q, want only the m7i node %s of drift", r.Decision.Nodes, r.Decision.NodePool, m7i.Status.NodeName)
		}
	}
}
