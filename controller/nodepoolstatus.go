package controller

import (
	"context"
	"encoding/json"
	"time"

	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// ResourceNodes is the nodes entry of NodePool status.resources (and of
// spec.limits), Karpenter's resources.Node.
const ResourceNodes corev1.ResourceName = "nodes"

// poolBaseResources are always in status.resources, 0 when no node has
// any (Karpenter's counter controller's BaseResources).
var poolBaseResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods,
	corev1.ResourceEphemeralStorage, ResourceNodes}

// PoolResources is what Karpenter's NodePool counter writes as each pool's
// status.resources: the summed capacity of its nodes not being deleted,
// and nodes (their count). A node is a launched NodeClaim (one with a
// capacity) with its Node, or a Node of the pool without a NodeClaim;
// its capacity is the Node's, the NodeClaim's filling what the Node does
// not report yet (before initialization), the NodeClaim's when no Node
// registered. Every pool named gets the base resources (cpu, memory,
// pods, ephemeral-storage, nodes) at 0 at least.
func PoolResources(pools []string, claims []*apiv1.NodeClaim, nodes []*corev1.Node) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	for _, p := range pools {
		rl := corev1.ResourceList{}
		for _, r := range poolBaseResources {
			rl[r] = resource.MustParse("0")
		}
		out[p] = rl
	}
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	add := func(pool string, capacity corev1.ResourceList) {
		rl, ok := out[pool]
		if !ok || len(capacity) == 0 {
			return
		}
		for name, q := range capacity {
			cur := rl[name]
			cur.Add(q)
			rl[name] = cur
		}
		n := rl[ResourceNodes]
		n.Add(resource.MustParse("1"))
		rl[ResourceNodes] = n
	}
	claimed := map[string]bool{}
	for _, nc := range claims {
		node := byName[nc.Status.NodeName]
		if node != nil {
			claimed[node.Name] = true
		}
		if nc.DeletionTimestamp != nil || (node != nil && node.DeletionTimestamp != nil) {
			continue
		}
		capacity := nc.Status.Capacity
		if node != nil && len(node.Status.Capacity) > 0 {
			capacity = node.Status.Capacity.DeepCopy()
			for name, q := range nc.Status.Capacity {
				if have, ok := capacity[name]; !ok || have.IsZero() {
					capacity[name] = q
				}
			}
		}
		add(nc.Labels[apiv1.LabelNodePool], capacity)
	}
	for _, n := range nodes {
		if !claimed[n.Name] && n.DeletionTimestamp == nil {
			add(n.Labels[apiv1.LabelNodePool], n.Status.Capacity)
		}
	}
	return out
}

// nodePoolStatus writes every NodePool's status.resources and
// status.nodes (PoolResources) every 5 s while leading, as Karpenter's
// counter controller does; a pool whose status already says so is not
// written.
type nodePoolStatus struct {
	cl  *kube.Cluster
	log *zap.Logger
}

func (s *nodePoolStatus) run(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		s.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *nodePoolStatus) once(ctx context.Context) {
	pools, _ := s.cl.NodePools()
	names := make([]string, 0, len(pools))
	for _, np := range pools {
		names = append(names, np.Name)
	}
	nodes, _ := s.cl.Nodes.List(labels.Everything())
	want := PoolResources(names, s.cl.NodeClaims(), nodes)
	for _, np := range pools {
		s.writeHash(ctx, np)
		patch, ok := nodePoolStatusPatch(np, want[np.Name])
		if !ok {
			continue
		}
		if err := s.cl.PatchNodePoolStatus(ctx, np.Name, patch); err != nil && ctx.Err() == nil {
			s.log.Warn("nodepool status.resources", zap.String("nodepool", np.Name), zap.Error(err))
		}
	}
}

// writeHash annotates the pool with its template hash and the hash's
// version (disruption.PoolHashAnnotations) when it does not say them yet,
// as Karpenter's NodePool hash controller does, so tools that read
// karpenter.sh/nodepool-hash from a NodePool keep working.
func (s *nodePoolStatus) writeHash(ctx context.Context, np *apiv1.NodePool) {
	ann := disruption.PoolHashAnnotations(np)
	if ann == nil {
		return
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err := s.cl.PatchNodePool(ctx, np.Name, patch); err != nil && ctx.Err() == nil {
		s.log.Warn("nodepool hash annotations", zap.String("nodepool", np.Name), zap.Error(err))
	}
}

// nodePoolStatusPatch is the merge patch that sets the pool's
// status.resources to want (entries no longer there set to null) and
// status.nodes to its node count; ok is false when nothing changes.
func nodePoolStatusPatch(np *apiv1.NodePool, want corev1.ResourceList) ([]byte, bool) {
	nodes := want[ResourceNodes]
	count := nodes.Value()
	same := np.Status.Nodes != nil && *np.Status.Nodes == count && len(np.Status.Resources) == len(want)
	for name, q := range want {
		if have, ok := np.Status.Resources[name]; !ok || !equality.Semantic.DeepEqual(have, q) {
			same = false
		}
	}
	if same {
		return nil, false
	}
	res := map[string]any{}
	for name := range np.Status.Resources {
		res[string(name)] = nil
	}
	for name, q := range want {
		res[string(name)] = q.String()
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"resources": res, "nodes": count}})
	return patch, true
}
