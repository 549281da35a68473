//go:build integration

package integration

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

const gcPool = "gc"

// launchOutside launches one c6a.large through the local EC2 endpoint with
// the real SDK, as someone other than Joinery would: tagged for cluster
// (joinery.sh/cluster) and NodePool gc, naming a NodeClaim that does not
// exist. (The endpoint on this branch accepts any launch template name.)
func launchOutside(t *testing.T, e *env, clusterName, claim string) aws.Instance {
	t.Helper()
	cc, err := aws.New(e.ctx, aws.Options{Endpoint: e.w.EC2Endpoint, ClusterName: clusterName, Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	subnets, err := cc.Subnets(e.ctx, []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}})
	if err != nil || len(subnets) == 0 {
		t.Fatalf("subnets: %v %v", subnets, err)
	}
	// Someone else's template (EC2 refuses a launch from one that does not
	// exist), booting a standard x86_64 image.
	template := "someone-elses-template-" + claim
	image := ""
	for _, img := range e.w.EC2.Images() {
		if img.Architecture == "x86_64" && img.Variant == "standard" {
			image = img.ID
		}
	}
	if _, err := e.w.EC2.CreateLaunchTemplate(template, ec2.LaunchTemplateData{ImageID: image}, nil); err != nil {
		t.Fatal(err)
	}
	inst, err := cc.Launch(e.ctx, aws.LaunchRequest{NodeClaim: claim, NodePool: gcPool, CapacityType: apiv1.CapacityTypeOnDemand,
		InstanceTypes: []string{"c6a.large"}, Subnets: subnets[:1], LaunchTemplateName: template})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func (e *env) ec2State(id string) string {
	in, ok := e.w.EC2.Instance(id)
	if !ok {
		return "unknown"
	}
	return in.State
}

func (e *env) gcStatus(t *testing.T) workflows.GCStatus {
	t.Helper()
	var st workflows.GCStatus
	v, err := e.tc.QueryWorkflow(e.ctx, workflows.GarbageCollectionWorkflowID, "", workflows.QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		t.Logf("query garbage-collection: %v", err)
	}
	return st
}

// appNode returns the node of the Running gc-app pod ("" if none).
func (e *env) appNode() string {
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=gc-app"})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			return p.Spec.NodeName
		}
	}
	return ""
}

func applyGCManifests(t *testing.T, e *env) {
	t.Helper()
	objs := readManifests(t, "testdata/gc.yaml")
	e.apply(t, objs)
}

// TestGarbageCollection: an instance tagged for this cluster that no
// NodeClaim names is terminated once the launch grace has passed, one
// tagged for another cluster is left alone, and an instance terminated
// behind Joinery's back loses its NodeClaim and Node, and its pod runs
// again on a new node.
func TestGarbageCollection(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.GCInterval, c.GCLaunchGrace = 2*time.Second, 5*time.Second })
	orphan := launchOutside(t, e, "joinery-it", "leaked-claim")
	foreign := launchOutside(t, e, "someone-else", "their-claim")
	waitFor(t, 2*time.Minute, "the orphan instance terminated", func() bool {
		s := e.ec2State(orphan.ID)
		return s == "shutting-down" || s == "terminated"
	})
	st := e.gcStatus(t)
	after := st.Passes
	waitFor(t, time.Minute, "two more passes", func() bool { return e.gcStatus(t).Passes >= after+2 })
	if s := e.ec2State(foreign.ID); s != "running" {
		t.Errorf("the instance of another cluster is %s, want running", s)
	}
	st = e.gcStatus(t)
	if st.Collected[workflows.GCKindInstance] != 1 || len(st.Recent) == 0 || st.Recent[0].Item.InstanceID != orphan.ID {
		t.Fatalf("garbage-collection status = %+v", st)
	}
	t.Logf("orphan %s collected: %s (after %d passes)", orphan.ID, st.Recent[0].Item.Why, st.Passes)
	waitFor(t, 30*time.Second, "a GarbageCollected Event", func() bool {
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=GarbageCollected"})
		return err == nil && len(evs.Items) > 0 && strings.Contains(evs.Items[0].Message, orphan.ID)
	})

	// A node Joinery launched, whose instance is terminated behind its back.
	applyGCManifests(t, e)
	waitFor(t, 3*time.Minute, "gc-app Running", func() bool { return e.appNode() != "" })
	first := e.appNode()
	node, err := e.kc.CoreV1().Nodes().Get(e.ctx, first, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := node.Spec.ProviderID[strings.LastIndex(node.Spec.ProviderID, "/")+1:]
	cc, err := aws.New(e.ctx, aws.Options{Endpoint: e.w.EC2Endpoint, ClusterName: "not-joinery", Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	// TerminateInstances, straight to EC2. An instance launched moments ago
	// may be unknown to the API yet (EC2 is eventually consistent), and
	// the client takes "not found" as terminated: ask until EC2 has it.
	waitFor(t, 30*time.Second, "EC2 to take the termination", func() bool {
		if err := cc.Terminate(e.ctx, id); err != nil {
			t.Fatal(err)
		}
		s := e.ec2State(id)
		return s == "shutting-down" || s == "terminated"
	})
	waitFor(t, 2*time.Minute, "the Node of the terminated instance gone", func() bool {
		_, err := e.kc.CoreV1().Nodes().Get(e.ctx, first, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := dc.Resource(apiv1.NodeClaimGVR).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range claims.Items {
		var nc apiv1.NodeClaim
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &nc)
		if strings.HasSuffix(nc.Status.ProviderID, "/"+id) && nc.DeletionTimestamp == nil {
			t.Errorf("NodeClaim %s of terminated instance %s still there", nc.Name, id)
		}
	}
	waitFor(t, 3*time.Minute, "gc-app Running on a new node", func() bool { n := e.appNode(); return n != "" && n != first })
	st = e.gcStatus(t)
	if st.Collected[workflows.GCKindNodeClaim] != 1 || st.Collected[workflows.GCKindNode] != 1 {
		t.Errorf("collected = %v", st.Collected)
	}
	t.Logf("instance %s terminated outside Joinery: node %s and its NodeClaim collected, pod now on %s; collected %v",
		id, first, e.appNode(), st.Collected)
	if s := e.ec2State(foreign.ID); s != "running" {
		t.Errorf("the instance of another cluster is %s at the end, want running", s)
	}
}

// scrapeAt reads one gauge from a worker's /metrics.
func scrapeAt(t *testing.T, addr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+" ") {
			v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(l, name)), 64)
			return v
		}
	}
	return -1
}

// TestSharedStateAcrossWorkers: two worker processes against one Temporal.
// An insufficient-capacity answer learned by whichever ran the launch is
// honoured by the other (its ICE cache holds it, and a later launch never
// asks EC2 for that offering again); SIGKILLing both and starting two new
// ones keeps the ICE cache and the emptiness clock.
func TestSharedStateAcrossWorkers(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	addrs := []string{"127.0.0.1:18091", "127.0.0.1:18092"}
	start := func() []*worker {
		var ws []*worker
		for _, a := range addrs {
			ws = append(ws, e.startWorker(t, "JOINERY_WORKER_METRICS="+a, "JOINERY_WORKER_DISRUPTION_INTERVAL=2s"))
		}
		return ws
	}
	workers := start()
	// us-east-1a has no c6a.large on-demand capacity.
	e.w.EC2.SetInsufficientCapacity("c6a.large", "us-east-1a", "on-demand", true)
	applyGCManifests(t, e)
	waitFor(t, 3*time.Minute, "gc-app Running", func() bool { return e.appNode() != "" })
	ice := e.w.EC2.FleetErrorCounts()["InsufficientInstanceCapacity"]
	if ice == 0 {
		t.Fatalf("no insufficient-capacity answer: %v", e.w.EC2.FleetErrorCounts())
	}
	waitFor(t, 30*time.Second, "both workers hold the ICE mark", func() bool {
		return scrapeAt(t, e.addr(addrs[0]), "joinery_cloud_ice_cache_size") >= 1 && scrapeAt(t, e.addr(addrs[1]), "joinery_cloud_ice_cache_size") >= 1
	})
	cm, err := e.kc.CoreV1().ConfigMaps("default").Get(e.ctx, sharedstate.OfferingCacheConfigMap, metav1.GetOptions{})
	if err != nil || cm.Data["c6a.large_us-east-1a_on-demand"] == "" {
		t.Fatalf("offering cache ConfigMap: %v %v", cm, err)
	}
	t.Logf("ICE learned once (%d answers), held by both workers; ConfigMap %v", ice, cm.Data)

	// Kill both, start two new ones: the new ones start with the mark, and
	// a second pod is planned away from us-east-1a (no new ICE answer).
	for _, w := range workers {
		w.kill()
	}
	workers = start()
	waitFor(t, time.Minute, "both new workers hold the ICE mark", func() bool {
		return scrapeAt(t, e.addr(addrs[0]), "joinery_cloud_ice_cache_size") >= 1 && scrapeAt(t, e.addr(addrs[1]), "joinery_cloud_ice_cache_size") >= 1
	})
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "gc-app", types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "2 gc-app pods Running", func() bool { n, _ := e.readyPods("app=gc-app"); return n == 2 })
	if got := e.w.EC2.FleetErrorCounts()["InsufficientInstanceCapacity"]; got != ice {
		t.Errorf("after the restart the launch asked for the ICE'd offering again: %d answers, was %d", got, ice)
	}

	// Emptiness clock: scale to 0 with consolidateAfter 10m, wait for the
	// pod-event clock (status.lastPodEventTime, the pods' deletion) on
	// both NodeClaims, kill both workers, restart: the clocks are unchanged.
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(apiv1.NodePoolGVR).Patch(e.ctx, gcPool, types.MergePatchType,
		[]byte(`{"spec":{"disruption":{"consolidateAfter":"10m"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	scaledAt := time.Now().Truncate(time.Second)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "gc-app", types.MergePatchType,
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	clocks := func() map[string]string {
		out := map[string]string{}
		l, err := dc.Resource(apiv1.NodeClaimGVR).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for _, u := range l.Items {
			var nc apiv1.NodeClaim
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &nc)
			if t := nc.Status.LastPodEventTime; t != nil && !t.Time.Before(scaledAt) {
				out[nc.Name] = t.UTC().Format(time.RFC3339)
			}
		}
		return out
	}
	var before map[string]string
	waitFor(t, 2*time.Minute, "the pods' deletion on both NodeClaims' clocks", func() bool { before = clocks(); return len(before) == 2 })
	time.Sleep(11 * time.Second) // a deletion inside the 10 s write window is written when it ends
	before = clocks()
	for _, w := range workers {
		w.kill()
	}
	_ = start()
	// Two consolidation passes by the new workers (2 s each) have looked.
	// The first query waits for a new worker to answer it.
	var st workflows.ConsolidationStatus
	waitFor(t, time.Minute, "a new worker answers the consolidation query", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil
	})
	passes := st.Passes
	// A decision the killed workers had in flight is retried only when its
	// one-minute start-to-close timeout ends: allow for that and two passes.
	waitFor(t, 3*time.Minute, "two consolidation passes after the restart", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil && st.Passes >= passes+2
	})
	if after := clocks(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("emptiness clocks after restarting every worker = %v, want %v", after, before)
	}
	t.Logf("emptiness clocks kept across the restart: %v", before)
}
