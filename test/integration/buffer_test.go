//go:build integration

package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/workflows"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// A CapacityBuffer of 10 pods' worth of 1 CPU / 1 GiB (CapacityBuffer
// gate on) gets nodes bought for it with no pod pending; consolidation
// passes consider those nodes (empty of real pods, consolidateAfter 5s)
// and keep them; a burst of 10 such pods runs on them, no node bought for
// any of its pods; then the buffer is re-created behind them on new
// capacity, and the metrics count the 10 pods absorbed in one burst.
func TestCapacityBufferAbsorbsABurst(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.FeatureGates.CapacityBuffer = true
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		c.MetricsAddr = metricsAddr
	})
	e.applyWithDefaultClass(t, "testdata/buffer.yaml")
	dyn := dynamic.NewForConfigOrDie(e.w.Kube.RESTConfig())
	bufferNamed := func(name string) *capacitybuffer.CapacityBuffer {
		u, err := dyn.Resource(capacitybuffer.CapacityBufferGVR).Namespace("default").Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		b := &capacitybuffer.CapacityBuffer{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b) != nil {
			return nil
		}
		return b
	}
	buffer := func() *capacitybuffer.CapacityBuffer { return bufferNamed("burst-buffer") }
	condition := func(b *capacitybuffer.CapacityBuffer, typ string) string {
		for _, c := range b.Status.Conditions {
			if c.Type == typ {
				return string(c.Status) + "/" + c.Reason + ": " + c.Message
			}
		}
		return ""
	}
	// held: every NodeClaim of the pool initialized, its node Ready, and
	// the buffer's 10 virtual pods on them.
	held := func() (nodes []string, claims map[string]bool) {
		b := buffer()
		if b == nil || b.Status.Replicas == nil || *b.Status.Replicas != 10 ||
			condition(b, capacitybuffer.ConditionProvisioning) != "True/CapacityProvisioned: 10 of 10 virtual pods fit on existing capacity" {
			return nil, nil
		}
		claims = map[string]bool{}
		for _, nc := range e.nodeClaims(t) {
			if nc.GetLabels()[apiv1.LabelNodePool] != "buffered" {
				continue
			}
			if nc.GetDeletionTimestamp() != nil {
				return nil, nil
			}
			claims[nc.GetName()] = true
		}
		list, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=buffered"})
		if err != nil {
			return nil, nil
		}
		for _, n := range list.Items {
			if n.DeletionTimestamp != nil || n.Labels[apiv1.LabelNodeInitialized] != "true" || !nodeIsReady(&n) {
				return nil, nil
			}
			nodes = append(nodes, n.Name)
		}
		if len(nodes) == 0 || len(nodes) != len(claims) {
			return nil, nil
		}
		sort.Strings(nodes)
		return nodes, claims
	}
	var nodes []string
	waitFor(t, 3*time.Minute, "the buffer held on Ready nodes", func() bool { nodes, _ = held(); return nodes != nil })
	b := buffer()
	t.Logf("buffer held on %v; %s; %s", nodes, condition(b, capacitybuffer.ConditionReadyForProvisioning), condition(b, capacitybuffer.ConditionProvisioning))
	if b.Status.PodTemplateRef == nil || b.Status.PodTemplateRef.Name != "burst-shape" || condition(b, capacitybuffer.ConditionReadyForProvisioning) != "True/Resolved: pod template resolved" {
		t.Errorf("status %+v", b.Status)
	}
	// The buffers Joinery cannot honour say why, naming the field, in
	// their status and a Warning Event.
	for name, want := range map[string]string{
		"no-template":    `False/PodTemplateNotFound: spec.podTemplateRef: podtemplates "missing" not found`,
		"cronjob-buffer": `False/ResolutionFailed: spec.scalableRef.kind: "CronJob" is not supported (Deployment, ReplicaSet, StatefulSet)`,
	} {
		var got string
		waitFor(t, 30*time.Second, "the status of CapacityBuffer "+name, func() bool {
			if b := bufferNamed(name); b != nil {
				got = condition(b, capacitybuffer.ConditionReadyForProvisioning)
			}
			return got == want
		})
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil || len(evs.Items) == 0 || evs.Items[0].Reason != "InvalidCapacityBuffer" || evs.Items[0].Type != corev1.EventTypeWarning ||
			!strings.HasPrefix(evs.Items[0].Message, strings.SplitN(want, ": ", 2)[1][:20]) {
			t.Errorf("Events of CapacityBuffer %s: %+v %v", name, evs, err)
		}
	}
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Fatalf("pods in default before the burst: %d %v (virtual pods must never be Pod objects)", len(pods.Items), err)
	}

	// Consolidation passes that had the (empty, consolidatable) nodes as
	// candidates decide nothing about them.
	heldAt := time.Now()
	var st workflows.ConsolidationStatus
	waitFor(t, 2*time.Minute, "two consolidation passes with the buffer's nodes eligible", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil || st.LastPass == nil {
			return false
		}
		return st.LastPass.At.After(heldAt.Add(8*time.Second)) && st.LastPass.Eligible >= len(nodes)
	})
	t.Logf("pass %d at %s: %d eligible, %q", st.Passes, st.LastPass.At.Format(time.RFC3339), st.LastPass.Eligible, st.LastPass.Why)
	// Three more passes (and a decision's validation delay): any decision
	// about these nodes would have been acted on by then.
	passes := st.Passes
	whys := map[string]bool{}
	waitFor(t, time.Minute, "three more consolidation passes", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil || st.LastPass == nil {
			return false
		}
		whys[st.LastPass.Why] = true
		return st.Passes >= passes+3
	})
	t.Logf("passes %d..%d decided: %v", passes, st.Passes, whys)
	for _, r := range st.History {
		t.Errorf("consolidation decided %s of %v (%s): the buffer's nodes must stay", r.Decision.Method, r.Decision.Nodes, r.Decision.Why)
	}
	before, claimsBefore := held()
	if before == nil || strings.Join(before, ",") != strings.Join(nodes, ",") {
		t.Fatalf("after the consolidation passes the buffer is held on %v, want it still on %v", before, nodes)
	}
	for _, n := range before {
		node, err := e.kc.CoreV1().Nodes().Get(e.ctx, n, metav1.GetOptions{})
		if err != nil || node.Spec.Unschedulable || taintKeyed(node.Spec.Taints, apiv1.TaintKeyDisrupted) {
			t.Fatalf("node %s after the consolidation passes: %v %v", n, err, node.Spec.Taints)
		}
	}
	instancesBefore := e.runningInstances()

	// The burst: 10 pods of the buffer's shape.
	burstStart := time.Now()
	one := int32(10)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "burst", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "burst"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "burst"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "buffered"}, Containers: []corev1.Container{{
					Name: "app", Image: "public.ecr.aws/nginx/nginx:alpine",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
				}}},
			}},
	}
	if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var burst []corev1.Pod
	waitFor(t, time.Minute, "10 burst pods Running", func() bool {
		l, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=burst"})
		if err != nil {
			return false
		}
		burst = burst[:0]
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				burst = append(burst, p)
			}
		}
		return len(burst) == 10
	})
	runningAt := time.Now()
	onNode := map[string]int{}
	uids := map[string]bool{}
	for _, p := range burst {
		onNode[p.Spec.NodeName]++
		uids[string(p.UID)] = true
		if !contains1(before, p.Spec.NodeName) {
			t.Errorf("burst pod %s runs on %s, not on one of the buffer's nodes %v", p.Name, p.Spec.NodeName, before)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				t.Errorf("burst pod %s was unschedulable: %s", p.Name, c.Message)
			}
		}
	}
	t.Logf("burst of 10 running %s after its start, by node: %v", runningAt.Sub(burstStart).Round(100*time.Millisecond), onNode)
	// No NodeClaim was bought for a burst pod: those created since carry no
	// nomination of one (they are the buffer's re-creation).
	for _, nc := range e.nodeClaims(t) {
		if claimsBefore[nc.GetName()] || nc.GetLabels()[apiv1.LabelNodePool] != "buffered" {
			continue
		}
		for _, uid := range strings.Split(nc.GetAnnotations()["joinery.sh/nominated-pods"], ",") {
			if uids[uid] {
				t.Errorf("NodeClaim %s was launched for burst pod %s", nc.GetName(), uid)
			}
		}
	}

	// The buffer is re-created behind the burst: new capacity, held again.
	var after []string
	var claimsAfter map[string]bool
	waitFor(t, 3*time.Minute, "the buffer re-created", func() bool {
		after, claimsAfter = held()
		return after != nil && len(claimsAfter) > len(claimsBefore)
	})
	var added []string
	for name := range claimsAfter {
		if !claimsBefore[name] {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	instancesAfter := e.runningInstances()
	t.Logf("re-created: nodes %v (new NodeClaims %v); running instances %d -> %d", after, added, instancesBefore, instancesAfter)
	if len(added) == 0 || instancesAfter <= instancesBefore {
		t.Errorf("no capacity bought after the burst: NodeClaims %v, instances %d -> %d", added, instancesBefore, instancesAfter)
	}
	series := func(name string) string {
		return fmt.Sprintf(`%s{name="burst-buffer",namespace="default"}`, name)
	}
	var absorbed, bursts float64
	waitFor(t, 30*time.Second, "the absorbed-burst metrics", func() bool {
		absorbed, bursts = scrapeAt(t, e.addr(metricsAddr), series("joinery_capacity_buffer_absorbed_pods_total")), scrapeAt(t, e.addr(metricsAddr), series("joinery_capacity_buffer_bursts_absorbed_total"))
		return absorbed >= 10
	})
	size := scrapeAt(t, e.addr(metricsAddr), series("joinery_capacity_buffer_pods"))
	cpu := scrapeAt(t, e.addr(metricsAddr), `joinery_capacity_buffer_resources{name="burst-buffer",namespace="default",resource_type="cpu"}`)
	t.Logf("metrics: %v pods absorbed in %v bursts; buffer %v pods, %v cpu", absorbed, bursts, size, cpu)
	if absorbed != 10 || bursts != 1 || size != 10 || cpu != 10 {
		t.Errorf("metrics: absorbed %v (want 10), bursts %v (want 1), buffer pods %v (want 10), cpu %v (want 10)", absorbed, bursts, size, cpu)
	}
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func taintKeyed(ts []corev1.Taint, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}

func contains1(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runningInstances counts the EC2 endpoint's pending and running instances.
func (e *env) runningInstances() int {
	n := 0
	for _, in := range e.w.EC2.Instances() {
		if in.State == "pending" || in.State == "running" {
			n++
		}
	}
	return n
}

// A NodePool annotated joinery.sh/headroom: "100%" with 2 pods of 1 CPU /
// 1 GiB keeps room for 2 more (2 virtual pods held, no CapacityBuffer
// gate needed); scaled to 4, the 2 new pods run on the nodes that were
// there, none launched for them, and the headroom grows to 4 behind them.
func TestNodePoolHeadroomKeepsSpareRoom(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		c.MetricsAddr = metricsAddr
	})
	e.applyWithDefaultClass(t, "testdata/headroom.yaml")
	metric := func(name string) float64 {
		return scrapeAt(t, e.addr(metricsAddr), name+`{name="spare",namespace="nodepool"}`)
	}
	running := func() []corev1.Pod {
		l, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=spare"})
		if err != nil {
			return nil
		}
		var out []corev1.Pod
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				out = append(out, p)
			}
		}
		return out
	}
	settled := func(want float64) ([]string, map[string]bool) {
		if len(running()) == 0 || metric("joinery_capacity_buffer_pods") != want || metric("joinery_capacity_buffer_held_pods") != want {
			return nil, nil
		}
		claims := map[string]bool{}
		for _, nc := range e.nodeClaims(t) {
			if nc.GetLabels()[apiv1.LabelNodePool] == "spare" {
				claims[nc.GetName()] = true
			}
		}
		list, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=spare"})
		if err != nil {
			return nil, nil
		}
		var nodes []string
		for _, n := range list.Items {
			if n.Labels[apiv1.LabelNodeInitialized] != "true" || !nodeIsReady(&n) {
				return nil, nil
			}
			nodes = append(nodes, n.Name)
		}
		if len(nodes) != len(claims) {
			return nil, nil
		}
		sort.Strings(nodes)
		return nodes, claims
	}
	var nodes []string
	var claims map[string]bool
	waitFor(t, 3*time.Minute, "2 pods running and 2 virtual pods held", func() bool {
		nodes, claims = settled(2)
		return nodes != nil && len(running()) == 2
	})
	t.Logf("2 pods, headroom of 2 held on %v", nodes)
	if cpu := scrapeAt(t, e.addr(metricsAddr), `joinery_capacity_buffer_resources{name="spare",namespace="nodepool",resource_type="cpu"}`); cpu != 2 {
		t.Errorf("headroom cpu %v, want 2", cpu)
	}

	scale := []byte(`{"spec":{"replicas":4}}`)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "spare", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	waitFor(t, time.Minute, "4 pods running", func() bool { pods = running(); return len(pods) == 4 })
	uids := map[string]bool{}
	for _, p := range pods {
		uids[string(p.UID)] = true
		if !contains1(nodes, p.Spec.NodeName) {
			t.Errorf("pod %s runs on %s, not on the headroom's nodes %v", p.Name, p.Spec.NodeName, nodes)
		}
	}
	for _, nc := range e.nodeClaims(t) {
		if claims[nc.GetName()] {
			continue
		}
		for _, uid := range strings.Split(nc.GetAnnotations()["joinery.sh/nominated-pods"], ",") {
			if uids[uid] {
				t.Errorf("NodeClaim %s was launched for pod %s", nc.GetName(), uid)
			}
		}
	}
	var after []string
	waitFor(t, 3*time.Minute, "the headroom grown to 4 and held", func() bool { after, _ = settled(4); return after != nil })
	t.Logf("4 pods, headroom of 4 held on %v", after)
	if len(after) <= len(nodes) {
		t.Errorf("headroom grown to 4 without new capacity: nodes %v -> %v", nodes, after)
	}
	if got := metric("joinery_capacity_buffer_absorbed_pods_total"); got != 2 {
		t.Errorf("pods absorbed %v, want 2", got)
	}
}
