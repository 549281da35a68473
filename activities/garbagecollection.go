package activities

import (
	"context"
	"fmt"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// LaunchTemplates is the launch-template API garbage collection needs
// (Deps.LaunchTemplates, or the Launch activities' own through
// Activities.EnableLaunchTemplateGC); without one, CollectLaunchTemplates
// has nothing to collect.
type LaunchTemplates interface {
	// List returns the launch templates tagged joinery.sh/cluster=<cluster>.
	List(ctx context.Context) ([]gc.LaunchTemplate, error)
	// InUse names the templates a NodeClaim or an EC2NodeClass still needs.
	InUse(ctx context.Context) (map[string]bool, error)
	// Delete deletes one (a missing one is not an error).
	Delete(ctx context.Context, name string) error
}

// reasonGarbageCollected is the Event reason of every collection.
const reasonGarbageCollected = "GarbageCollected"

// PlanGarbageCollection lists this cluster's instances (one
// DescribeInstances by tag filter), reads NodeClaims and Nodes from the
// informer caches, looks up by id the few instances the listing lacks
// whose state decides, and returns what gc.Decide says to collect.
func (a *GC) PlanGarbageCollection(ctx context.Context, p workflows.GCPass) (workflows.GCPlan, error) {
	start := time.Now()
	insts, err := a.cloud.List(ctx)
	a.metrics.CloudProviderCall(metrics.ControllerGC, metrics.MethodList, time.Since(start).Seconds(), err != nil, cloudProviderError(err))
	if err != nil {
		return workflows.GCPlan{}, err
	}
	snap := a.gcSnapshot(insts)
	out := workflows.GCPlan{Listed: len(insts), LaunchTemplateAPI: a.launchTemplates != nil}
	if a.launchTemplates != nil {
		lts, err := a.launchTemplates.List(ctx)
		if err != nil {
			return out, err
		}
		inUse, err := a.launchTemplates.InUse(ctx)
		if err != nil {
			return out, err
		}
		if inUse == nil {
			inUse = map[string]bool{}
		}
		snap.LaunchTemplates, snap.TemplatesInUse = lts, inUse
	}
	if err := a.addPlacementGroups(ctx, &snap); err != nil {
		return out, err
	}
	opts := gc.Options{LaunchGrace: p.LaunchGrace, NotFoundGrace: a.cloud.ConsistencyWindow()}
	plan := gc.Decide(snap, p.Now, opts)
	if len(plan.Confirm) > 0 {
		snap.Lookups = map[string]string{}
		found, err := a.cloud.GetAll(ctx, plan.Confirm) // batched: a few calls for any number
		if err != nil {
			return out, err
		}
		for _, id := range plan.Confirm {
			snap.Lookups[id] = gc.StateNotFound
			if inst, ok := found[id]; ok {
				snap.Lookups[id] = inst.State
			}
		}
		plan = gc.Decide(snap, p.Now, opts)
	}
	states := map[string]string{}
	for _, i := range snap.Instances {
		states[i.ID] = i.State
	}
	launched := map[string]gc.Instance{}
	for _, i := range snap.Instances {
		launched[i.ID] = i
	}
	item := func(c gc.Collect) workflows.GCItem {
		st := states[c.InstanceID]
		if s, ok := snap.Lookups[c.InstanceID]; ok {
			st = s
		}
		return workflows.GCItem{Name: c.Name, NodePool: c.NodePool, InstanceID: c.InstanceID, NodeClaim: c.NodeClaim,
			NodeName: c.NodeName, State: st, LaunchTime: launched[c.InstanceID].LaunchTime, Why: c.Why}
	}
	for _, c := range plan.Instances {
		out.Instances = append(out.Instances, item(c))
	}
	for _, c := range plan.NodeClaims {
		out.NodeClaims = append(out.NodeClaims, item(c))
	}
	for _, c := range plan.Nodes {
		out.Nodes = append(out.Nodes, item(c))
	}
	for _, c := range plan.LaunchTemplates {
		out.LaunchTemplates = append(out.LaunchTemplates, item(c))
	}
	for _, c := range plan.PlacementGroups {
		out.PlacementGroups = append(out.PlacementGroups, workflows.GCItem{Name: c.Name, Why: c.Why})
	}
	if n := len(out.Instances) + len(out.NodeClaims) + len(out.Nodes) + len(out.LaunchTemplates) + len(out.PlacementGroups); n > 0 {
		activityLogger(ctx, a.log).Info("garbage collection plan", zap.Int("listed", len(insts)), zap.Int("instances", len(out.Instances)),
			zap.Int("nodeclaims", len(out.NodeClaims)), zap.Int("nodes", len(out.Nodes)), zap.Int("launchTemplates", len(out.LaunchTemplates)),
			zap.Int("placementGroups", len(out.PlacementGroups)))
	}
	return out, nil
}

// gcSnapshot builds the policy's view from the listed instances and the
// informer caches.
func (a *GC) gcSnapshot(insts []aws.Instance) gc.Snapshot {
	s := gc.Snapshot{Cluster: a.clusterName}
	for _, i := range insts {
		s.Instances = append(s.Instances, gc.Instance{ID: i.ID, State: i.State, LaunchTime: i.LaunchTime, Tags: i.Tags})
	}
	for _, nc := range a.cluster.NodeClaims() {
		c := gc.NodeClaim{Name: nc.Name, NodePool: nc.Labels[apiv1.LabelNodePool], ProviderID: nc.Status.ProviderID,
			NodeName: nc.Status.NodeName, Launched: nc.CreationTimestamp.Time, Deleting: nc.DeletionTimestamp != nil}
		for _, cond := range nc.Status.Conditions {
			if cond.Type == apiv1.ConditionLaunched && cond.Status == metav1.ConditionTrue && !cond.LastTransitionTime.IsZero() {
				c.Launched = cond.LastTransitionTime.Time
			}
		}
		s.NodeClaims = append(s.NodeClaims, c)
	}
	nodes, _ := a.cluster.Nodes.List(labels.Everything())
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		s.Nodes = append(s.Nodes, gc.Node{Name: n.Name, ProviderID: n.Spec.ProviderID, NodePool: n.Labels[apiv1.LabelNodePool],
			Created: n.CreationTimestamp.Time, Deleting: n.DeletionTimestamp != nil})
	}
	return s
}

// recheck plans again on the current caches with the planned instances'
// states, and returns the items still to collect of the given plan part.
func (a *GC) recheck(c workflows.GCCollect, part func(gc.Plan) []gc.Collect, items []workflows.GCItem) (keep []workflows.GCItem, kept []string) {
	var insts []aws.Instance
	lookups := map[string]string{}
	for _, it := range items {
		if it.InstanceID == "" {
			continue
		}
		lookups[it.InstanceID] = it.State
		if !it.LaunchTime.IsZero() {
			insts = append(insts, aws.Instance{ID: it.InstanceID, State: it.State, LaunchTime: it.LaunchTime, Tags: map[string]string{
				apiv1.TagCluster: a.clusterName, apiv1.TagNodePool: it.NodePool, apiv1.TagNodeClaim: it.NodeClaim}})
		}
	}
	snap := a.gcSnapshot(insts)
	snap.Lookups = lookups
	still := map[string]gc.Collect{}
	for _, col := range part(gc.Decide(snap, c.Now, gc.Options{LaunchGrace: c.LaunchGrace, NotFoundGrace: a.cloud.ConsistencyWindow()})) {
		still[col.Name] = col
	}
	for _, it := range items {
		col, ok := still[it.Name]
		if !ok {
			kept = append(kept, it.Name)
			continue
		}
		it.NodeName = col.NodeName
		keep = append(keep, it)
	}
	return keep, kept
}

// CollectInstances terminates instances of this cluster that belong to no
// NodeClaim (re-checked on the current caches) and deletes their Nodes.
func (a *GC) CollectInstances(ctx context.Context, c workflows.GCCollect) (workflows.GCResult, error) {
	res := workflows.GCResult{Collected: map[string][]workflows.GCItem{}}
	items, kept := a.recheck(c, func(p gc.Plan) []gc.Collect { return p.Instances }, c.Items)
	res.Kept = kept
	if len(items) == 0 {
		return res, nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.InstanceID
	}
	if err := a.cloud.Terminate(ctx, ids...); err != nil {
		return res, err
	}
	for _, it := range items {
		res.Collected[workflows.GCKindInstance] = append(res.Collected[workflows.GCKindInstance], it)
		a.collected(ctx, workflows.GCKindInstance, it, "terminated instance "+it.InstanceID+": "+it.Why)
		if it.NodeName == "" {
			continue
		}
		if err := a.deleteGoneNode(ctx, it.NodeName); err != nil {
			return res, err
		}
		res.Collected[workflows.GCKindNode] = append(res.Collected[workflows.GCKindNode], it)
		a.collected(ctx, workflows.GCKindNode, it, "deleted node "+it.NodeName+": its instance "+it.InstanceID+" belonged to no NodeClaim")
	}
	return res, nil
}

// CollectNodeClaims deletes NodeClaims whose instance is gone, with their
// Node and the pods bound to it (nothing runs them any more, so they are
// deleted at once and provisioned again), and Joinery Nodes left with
// neither NodeClaim nor instance. Deletes keep finalizers: where a
// termination finalizer is set, its flow finishes the job and finds
// nothing left to drain.
func (a *GC) CollectNodeClaims(ctx context.Context, c workflows.GCCollect) (workflows.GCResult, error) {
	res := workflows.GCResult{Collected: map[string][]workflows.GCItem{}}
	claims, kept := a.recheck(c, func(p gc.Plan) []gc.Collect { return p.NodeClaims }, c.Items)
	nodes, keptNodes := a.recheck(c, func(p gc.Plan) []gc.Collect { return p.Nodes }, c.Nodes)
	res.Kept = append(kept, keptNodes...)
	for _, it := range claims {
		if it.NodeName != "" {
			if err := a.deleteGoneNode(ctx, it.NodeName); err != nil {
				return res, err
			}
		}
		err := a.cluster.DeleteNodeClaimKeepFinalizers(ctx, it.Name)
		if err != nil {
			return res, err
		}
		res.Collected[workflows.GCKindNodeClaim] = append(res.Collected[workflows.GCKindNodeClaim], it)
		a.collected(ctx, workflows.GCKindNodeClaim, it, "deleted NodeClaim "+it.Name+": "+it.Why)
		if it.NodeName != "" {
			res.Collected[workflows.GCKindNode] = append(res.Collected[workflows.GCKindNode], it)
			a.collected(ctx, workflows.GCKindNode, it, "deleted node "+it.NodeName+": "+it.Why)
		}
	}
	for _, it := range nodes {
		if err := a.deleteGoneNode(ctx, it.NodeName); err != nil {
			return res, err
		}
		res.Collected[workflows.GCKindNode] = append(res.Collected[workflows.GCKindNode], it)
		a.collected(ctx, workflows.GCKindNode, it, "deleted node "+it.NodeName+": "+it.Why)
	}
	return res, nil
}

// CollectLaunchTemplates deletes launch templates of this cluster that no
// NodeClaim or NodeClass uses (re-checked). Without a launch-template API
// (Activities.LaunchTemplates nil) there is nothing to do.
func (a *GC) CollectLaunchTemplates(ctx context.Context, c workflows.GCCollect) (workflows.GCResult, error) {
	res := workflows.GCResult{Collected: map[string][]workflows.GCItem{}}
	if a.launchTemplates == nil {
		return res, nil
	}
	inUse, err := a.launchTemplates.InUse(ctx)
	if err != nil {
		return res, err
	}
	for _, it := range c.Items {
		if inUse[it.Name] {
			res.Kept = append(res.Kept, it.Name)
			continue
		}
		if err := a.launchTemplates.Delete(ctx, it.Name); err != nil {
			return res, err
		}
		res.Collected[workflows.GCKindLaunchTemplate] = append(res.Collected[workflows.GCKindLaunchTemplate], it)
		a.collected(ctx, workflows.GCKindLaunchTemplate, it, "deleted launch template "+it.Name+": "+it.Why)
	}
	return res, nil
}

// deleteGoneNode deletes the pods bound to a node whose instance is gone
// (at once: no kubelet runs them) and then the Node, if it is still
// Joinery's (karpenter.sh/nodepool label). Missing objects are fine.
func (a *GC) deleteGoneNode(ctx context.Context, name string) error {
	node, err := a.cluster.Nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if node.Labels[apiv1.LabelNodePool] == "" {
		return nil // not Joinery's: never touched
	}
	zero := int64(0)
	for _, p := range a.cluster.PodsOnNode(name) {
		err := a.cluster.DeletePod(ctx, p, &zero, p.UID)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete pod %s/%s of gone node %s: %w", p.Namespace, p.Name, name, err)
		}
	}
	err = a.cluster.RequestNodeDeletion(ctx, name, node.UID)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	return nil
}

// collected records one collection: an Event (on the NodeClaim, the Node,
// or the NodePool an orphan instance was tagged with), a log line and
// joinery_garbage_collected_total{kind}.
func (a *GC) collected(ctx context.Context, kind string, it workflows.GCItem, msg string) {
	var ref *corev1.ObjectReference
	switch {
	case kind == workflows.GCKindNode:
		ref = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: it.NodeName, UID: types.UID(it.NodeName)}
	case kind == workflows.GCKindNodeClaim:
		ref = &corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: it.Name}
	case it.NodePool != "":
		ref = &corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: it.NodePool}
	}
	if ref != nil && a.cluster.Recorder != nil {
		a.cluster.Recorder.Event(ref, corev1.EventTypeNormal, reasonGarbageCollected, msg)
	}
	a.metrics.Collected(kind)
	activityLogger(ctx, a.log).Info("garbage collected", zap.String("kind", kind), zap.String("name", it.Name), zap.String("instance", it.InstanceID),
		zap.String("nodeclaim", it.NodeClaim), zap.String("node", it.NodeName), zap.String("nodepool", it.NodePool), zap.String("why", it.Why))
}
