package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"

	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reportedFailures are the failure types workflows end with on purpose,
// after recording an Event that says why.
var reportedFailures = map[string]bool{
	workflows.ErrReplacementFailed:    true,
	workflows.ErrInsufficientCapacity: true,
	workflows.ErrNodeClaimGone:        true,
}

// The chaos worker's garbage collection (worker.go): a pass every
// gcInterval, instances collected gcGrace after launch; an instance may
// therefore live without NodeClaim for the grace plus up to two passes.
const (
	chaosCluster       = "joinery-chaos"
	gcInterval         = 10 * time.Second
	gcGrace            = 30 * time.Second
	gcInstanceDeadline = gcGrace + 2*gcInterval
)

// costInvariant is the name of the $/hour check.
const costInvariant = "USD/hour within 10% of the solver's plan"

// check fills the report's figures and invariants.
func (r *run) check(ctx context.Context) {
	rep := r.rep
	if c, err := r.sagas(ctx); err == nil {
		rep.Sagas, rep.SagasTotal = c, total(c)
	}
	for _, v := range r.w.EC2.Calls() {
		rep.EC2Calls += v
	}
	for _, v := range r.w.EC2.ThrottledCalls() {
		rep.EC2Throttled += v
	}
	rep.ICEEvents = r.w.EC2.FleetErrorCounts()["InsufficientInstanceCapacity"]
	r.checkObjects(ctx)
	r.checkPDB()
	r.checkPods(ctx)
	r.checkWorkflows(ctx)
	r.checkCost(ctx)
	rep.Passed = true
	for _, in := range rep.Invariants {
		rep.Passed = rep.Passed && in.OK
	}
}

func (r *run) add(in Invariant) { r.rep.Invariants = append(r.rep.Invariants, in) }

// checkObjects checks 0 leaked instances, 0 orphaned NodeClaims/Nodes, and garbage collection's promises.
func (r *run) checkObjects(ctx context.Context) {
	add := r.add
	nodes, err := r.kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		add(Invariant{Name: "0 leaked, 0 orphaned", Figure: "list nodes: " + err.Error()})
	}
	ncs, err2 := r.dc.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err2 != nil {
		add(Invariant{Name: "0 leaked, 0 orphaned", Figure: "list nodeclaims: " + err2.Error()})
	}
	if err == nil && err2 == nil {
		running := map[string]ec2.Instance{}
		for _, in := range r.w.EC2.Instances() {
			if in.State == ec2.StateRunning {
				running["aws:///"+in.Zone+"/"+in.ID] = in
			}
		}
		nodeBy, claimBy := map[string]string{}, map[string]string{}
		for _, n := range nodes.Items {
			if n.Spec.ProviderID != "" {
				nodeBy[n.Spec.ProviderID] = n.Name
			}
		}
		liveWF := map[string]bool{}
		_ = r.listWorkflows(ctx, `ExecutionStatus = "Running"`, func(e wfInfo) { liveWF[e.ID] = true })
		var leaked, orphaned []string
		for _, nc := range ncs.Items {
			pid, _, _ := unstructured.NestedString(nc.Object, "status", "providerID")
			if pid != "" {
				claimBy[pid] = nc.GetName()
			}
			if _, ok := running[pid]; !ok && !liveWF[workflows.NodeClaimWorkflowID(nc.GetName())] {
				orphaned = append(orphaned, fmt.Sprintf("NodeClaim %s (providerID %q): no running instance and no workflow", nc.GetName(), pid))
			}
		}
		for _, n := range nodes.Items {
			if n.Labels["karpenter.sh/nodepool"] == "" {
				continue
			}
			if _, ok := running[n.Spec.ProviderID]; !ok {
				orphaned = append(orphaned, fmt.Sprintf("Node %s (%s): no running instance", n.Name, n.Spec.ProviderID))
			}
		}
		for pid, in := range running {
			if nodeBy[pid] == "" || claimBy[pid] == "" {
				leaked = append(leaked, fmt.Sprintf("instance %s %s %s: Node %q NodeClaim %q", in.ID, in.InstanceType, in.Zone, nodeBy[pid], claimBy[pid]))
			}
		}
		sort.Strings(leaked)
		sort.Strings(orphaned)
		// Garbage collection's promises: every Joinery Node has
		// a NodeClaim, and no instance tagged for the cluster outlives the
		// launch grace plus two passes without one.
		claimNode := map[string]bool{}
		for _, nc := range ncs.Items {
			if name, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName"); name != "" {
				claimNode[name] = true
			}
		}
		var nodeNoClaim, instNoClaim []string
		for _, n := range nodes.Items {
			if n.Labels["karpenter.sh/nodepool"] != "" && claimBy[n.Spec.ProviderID] == "" && !claimNode[n.Name] {
				nodeNoClaim = append(nodeNoClaim, fmt.Sprintf("Node %s (%s, created %s)", n.Name, n.Spec.ProviderID, n.CreationTimestamp.UTC().Format(time.RFC3339)))
			}
		}
		cutoff := time.Now().Add(-gcInstanceDeadline)
		for _, in := range r.w.EC2.Instances() {
			pid := "aws:///" + in.Zone + "/" + in.ID
			if in.Tags[apiv1.TagCluster] != chaosCluster || (in.State != ec2.StateRunning && in.State != ec2.StatePending) ||
				claimBy[pid] != "" || !in.LaunchTime.Before(cutoff) {
				continue
			}
			instNoClaim = append(instNoClaim, fmt.Sprintf("instance %s %s (%s, launched %s, NodeClaim tag %q)", in.ID, in.InstanceType, in.State,
				in.LaunchTime.UTC().Format(time.RFC3339), in.Tags[apiv1.TagNodeClaim]))
		}
		sort.Strings(nodeNoClaim)
		sort.Strings(instNoClaim)
		add(Invariant{Name: "no Node without NodeClaim", OK: len(nodeNoClaim) == 0,
			Figure: fmt.Sprintf("%d of %d Nodes", len(nodeNoClaim), len(nodes.Items)), Details: nodeNoClaim})
		add(Invariant{Name: "no instance without NodeClaim after the grace period", OK: len(instNoClaim) == 0,
			Figure: fmt.Sprintf("%d instances older than %s without NodeClaim", len(instNoClaim), gcInstanceDeadline), Details: instNoClaim})
		add(Invariant{Name: "0 leaked instances", OK: len(leaked) == 0, Figure: fmt.Sprintf("%d leaked of %d running", len(leaked), len(running)), Details: leaked})
		add(Invariant{Name: "0 orphaned NodeClaims/Nodes", OK: len(orphaned) == 0, Figure: fmt.Sprintf("%d orphaned of %d NodeClaims", len(orphaned), len(ncs.Items)), Details: orphaned})
	}
}

// checkPDB checks the sampled PodDisruptionBudget never dipped below
// minAvailable, but around a spot reclaim (involuntary: see samplePDB).
func (r *run) checkPDB() {
	rep := r.rep
	add := r.add
	r.mu.Lock()
	rep.PDBMinReady, rep.PDBSamples, rep.PDBReclaimMinReady = r.pdbMin, r.pdbSamples, r.pdbReclaimMin
	bad := append([]string(nil), r.pdbBad...)
	r.mu.Unlock()
	add(Invariant{Name: "PDB never violated", OK: rep.PDBSamples > 0 && rep.PDBMinReady >= 8,
		Figure: fmt.Sprintf("min %d Ready of 10 (minAvailable 8) over %d samples", rep.PDBMinReady, rep.PDBSamples), Details: bad})
}

// checkPods checks no pod was lost: every wanted pod Running at the end.
func (r *run) checkPods(ctx context.Context) {
	rep := r.rep
	add := r.add
	r.mu.Lock()
	lost := append([]string(nil), r.lost...)
	r.mu.Unlock()
	pods, err := r.kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	notRunning := []string{}
	if err == nil {
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded {
				continue
			}
			if p.Status.Phase != corev1.PodRunning || !podReady(&p) || p.DeletionTimestamp != nil {
				notRunning = append(notRunning, fmt.Sprintf("%s: %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
			} else {
				rep.FinalPods++
			}
		}
	}
	want := 0
	for _, d := range []string{"inflate", "workload-sample"} {
		if dep, err := r.kc.AppsV1().Deployments("default").Get(ctx, d, metav1.GetOptions{}); err == nil && dep.Spec.Replicas != nil {
			want += int(*dep.Spec.Replicas)
		}
	}
	lostAll := append(lost, notRunning...)
	add(Invariant{Name: "0 lost pods", OK: err == nil && len(lostAll) == 0 && rep.FinalPods == want,
		Figure: fmt.Sprintf("%d deleted after their node vanished, %d not Running at the end; %d of %d wanted Running", len(lost), len(notRunning), rep.FinalPods, want), Details: lostAll})
}

// checkWorkflows checks every workflow completed or waits as designed.
func (r *run) checkWorkflows(ctx context.Context) {
	rep := r.rep
	add := r.add
	var wfBad []string
	stillBusy := 0
	err := r.listWorkflows(ctx, "", func(e wfInfo) {
		rep.Workflows[strings.ToLower(strings.TrimPrefix(e.Status.String(), "WORKFLOW_EXECUTION_STATUS_"))]++
		switch e.Status {
		case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			switch e.Type {
			case workflows.NodeClaimWorkflow, workflows.ConsolidationWorkflow, workflows.InterruptionPollerWorkflow, workflows.GarbageCollectionWorkflow:
			default:
				stillBusy++
				wfBad = append(wfBad, fmt.Sprintf("%s (%s) still running after the settle phase", e.ID, e.Type))
			}
		case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
			typ, msg := r.failure(ctx, e.ID, e.RunID)
			if !reportedFailures[typ] {
				wfBad = append(wfBad, fmt.Sprintf("%s failed: %s: %s", e.ID, typ, msg))
			}
		default:
			wfBad = append(wfBad, fmt.Sprintf("%s: %s", e.ID, e.Status))
		}
	})
	if err != nil {
		wfBad = append(wfBad, "list workflows: "+err.Error())
	}
	add(Invariant{Name: "workflows completed or waiting as designed", OK: len(wfBad) == 0,
		Figure: fmt.Sprintf("%s; %d failures not reported, %d still in flight", fmtCounts(rep.Workflows), len(wfBad)-stillBusy, stillBusy), Details: wfBad})
}

// checkCost checks the final cost against the solver's plan for the final pods.
func (r *run) checkCost(ctx context.Context) {
	rep := r.rep
	add := r.add
	s, err := world.Summarize(ctx, r.kc, rep.FinalPods)
	if err == nil {
		rep.FinalUSDPerHour = s.USDPerHour
		for _, g := range s.Nodes {
			rep.FinalNodes += g.Count
		}
	}
	plan, perr := r.plan(ctx)
	rep.PlanUSDPerHour = plan
	ok := err == nil && perr == nil && plan > 0 && rep.FinalUSDPerHour <= 1.10*plan
	fig := fmt.Sprintf("%.4f USD/h running vs %.4f planned (%+.1f%%)", rep.FinalUSDPerHour, plan, 100*(rep.FinalUSDPerHour/plan-1))
	var det []string
	if perr != nil {
		det = append(det, "plan: "+perr.Error())
	}
	if s != nil {
		for _, g := range s.Nodes {
			det = append(det, fmt.Sprintf("%s %s %s %s x%d %.4f", g.NodePool, g.InstanceType, g.CapacityType, g.Zone, g.Count, g.USDPerHour))
		}
	}
	if !ok {
		det = append(det, r.consolidationVerdicts(ctx)...)
	}
	add(Invariant{Name: costInvariant, OK: ok, Figure: fig, Details: det})
}

// consolidationVerdicts is what the Consolidation workflow's last pass
// said: why no node was disrupted, per node.
func (r *run) consolidationVerdicts(ctx context.Context) []string {
	v, err := r.tc.QueryWorkflow(ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
	var st workflows.ConsolidationStatus
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		return []string{"consolidation status: " + err.Error()}
	}
	if st.LastPass == nil {
		return []string{"consolidation: no pass reported"}
	}
	out := []string{fmt.Sprintf("last consolidation pass %s: %s", st.LastPass.At.UTC().Format(time.RFC3339), st.LastPass.Why)}
	for _, b := range st.LastPass.Nodes {
		var why []string
		for _, rs := range b.Reasons {
			why = append(why, rs.Reason+": "+rs.Message)
		}
		out = append(out, fmt.Sprintf("  %s (%s): %s", b.Node, b.NodeClaim, strings.Join(why, "; ")))
	}
	return out
}

// failure reads a failed workflow's failure type and message.
func (r *run) failure(ctx context.Context, id, runID string) (string, string) {
	it := r.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "?", err.Error()
		}
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			f := a.GetFailure()
			typ := f.GetApplicationFailureInfo().GetType()
			for typ == "" && f.GetCause() != nil {
				f = f.GetCause()
				typ = f.GetApplicationFailureInfo().GetType()
			}
			return typ, a.GetFailure().GetMessage()
		}
	}
	return "?", "no close event"
}

// plan is what the solver plans, on an empty cluster, for the final pods:
// the applied NodePools and the two workloads at their final replicas.
func (r *run) plan(ctx context.Context) (float64, error) {
	docs, errs := planner.ReadFiles(filepath.Join(r.cfg.Examples, "nodepools.yaml"), filepath.Join(r.cfg.Examples, "workloads.yaml"))
	if len(errs) > 0 {
		return 0, errs
	}
	var keep []planner.Doc
	for _, d := range docs {
		o := d.Obj
		switch {
		case o.GetKind() == "NodePool" || o.GetKind() == "EC2NodeClass":
			keep = append(keep, d)
		case o.GetKind() == "Deployment" && (o.GetName() == "inflate" || o.GetName() == "workload-sample"):
			dep, err := r.kc.AppsV1().Deployments("default").Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				return 0, err
			}
			_ = unstructured.SetNestedField(o.Object, int64(*dep.Spec.Replicas), "spec", "replicas")
			keep = append(keep, d)
		}
	}
	b, errs := planner.Build(keep, planner.Options{})
	if len(errs) > 0 {
		return 0, errs
	}
	res := planner.Solve(b.Input)
	if len(res.Plan.Unschedulable) > 0 {
		return res.Price, fmt.Errorf("%d pods unschedulable in the plan", len(res.Plan.Unschedulable))
	}
	return res.Price, nil
}
