package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// snapshots reads the cluster into the solver's input (a snapshot): the
// informer caches, the live catalog and market, the ICE cache, the
// capacity buffers' virtual pods, NodeOverlays' prices. Building one writes
// nothing; take also reports the NodePools it skipped.
type snapshots struct {
	cluster        *kube.Cluster
	types          capacity.InstanceTypes
	market         *catalog.Market
	ice            *aws.ICECache
	staticCapacity bool // the StaticCapacity feature gate
	// minValuesBestEffort: MIN_VALUES_POLICY=BestEffort (solver.Input.MinValuesBestEffort).
	minValuesBestEffort bool
	spread              solver.SpreadDefaults
	nominations         *capacity.Nominations
	prices              *capacity.Prices // given the NodeOverlays each snapshot resolves
	pools               *pools
	buffers             *buffers
}

// snapshot is the solver input plus what is needed to act on the plan.
type snapshot struct {
	input     solver.Input
	pools     map[string]*apiv1.NodePool
	podsByKey map[string]*corev1.Pod
	pending   int
	nominated int
	held      int // pointed at a Node with room for them (capacity.Waits.Held)
	// lapsed counts the pending pods whose nomination ended, by why.
	lapsed capacity.Lapsed
	// notReady says, per skipped NodePool, which condition of its
	// EC2NodeClass keeps it from launching.
	notReady []string
	// volumes looks up the claims, PersistentVolumes and StorageClasses
	// pods' volumes name (informer caches).
	volumes solver.VolumeObjects
	// selectors looks up what selects a pod, for default spread
	// constraints (informer caches); spread are those defaults.
	selectors solver.SelectorObjects
	spread    solver.SpreadDefaults
	// used is, per node, the requests of its active pods, with the EBS
	// volumes attached to it (its pods' and its VolumeAttachments', each
	// once); attached are all those volumes: a pending pod that shares one
	// does not count it again.
	used     map[string]resources.List
	attached solver.VolumeSet
	// static are the static NodePools (spec.replicas, StaticCapacity on)
	// as the solver would see them: never in input.NodePools (no
	// provisioning for pending pods, no consolidation replacement in
	// them), only for the static reconciler's launches.
	static map[string]solver.NodePool
	// claimLabels are added to the NodeClaims written from this snapshot
	// (a gang try's marks).
	claimLabels map[string]string
	// nodePool is each node's karpenter.sh/nodepool label.
	nodePool map[string]string
	// buffers are the capacity buffers planned for (buffers.add);
	// bufferPlaced is, per buffer, the node of each virtual pod placed on
	// existing capacity, bufferOnNode their count per node; virtualKeys
	// are every virtual pod's key, virtualPending those left to provision.
	buffers        []*bufferView
	bufferPlaced   map[string][]string
	bufferOnNode   map[string]int
	virtualKeys    map[string]bool
	virtualPending int
}

// volumeObjects reads claims, PersistentVolumes and StorageClasses from the
// informer caches.
func (b *snapshots) volumeObjects() solver.VolumeObjects {
	return solver.VolumeObjects{
		PVC: func(ns, name string) *corev1.PersistentVolumeClaim {
			o, _ := b.cluster.PVCs.PersistentVolumeClaims(ns).Get(name)
			return o
		},
		PV: func(name string) *corev1.PersistentVolume {
			o, _ := b.cluster.PVs.Get(name)
			return o
		},
		StorageClass: func(name string) *storagev1.StorageClass {
			o, _ := b.cluster.StorageClasses.Get(name)
			return o
		},
	}
}

// take builds the solver input from the informer caches: valid
// NodePools with their instance types and usage, existing and in-flight
// nodes with their free capacity, pending pods not yet nominated, and
// DaemonSets.
func (b *snapshots) take(ctx context.Context, now time.Time) (*snapshot, error) {
	pools, invalid := b.cluster.NodePools()
	s, skipped := b.build(now, pools, b.cluster.NodeClass)
	b.pools.report(ctx, pools, append(invalid, skipped...))
	return s, nil
}

// build is take over the given NodePools, their EC2NodeClasses looked
// up by classOf, writing nothing (Preview plans a change's pools with it).
// It returns the pools skipped.
func (b *snapshots) build(now time.Time, pools []*apiv1.NodePool, classOf func(string) (*apiv1.EC2NodeClass, error)) (*snapshot, []kube.InvalidNodePool) {
	return b.buildWith(now, pools, classOf, nil)
}

// buildWith is build with before run on the snapshot just before the
// capacity buffers are placed (so they see its changes).
func (b *snapshots) buildWith(now time.Time, pools []*apiv1.NodePool, classOf func(string) (*apiv1.EC2NodeClass, error), before func(*snapshot)) (*snapshot, []kube.InvalidNodePool) {
	s := &snapshot{pools: map[string]*apiv1.NodePool{}, podsByKey: map[string]*corev1.Pod{}, volumes: b.volumeObjects(), selectors: b.selectorObjects(),
		spread: b.spread, static: map[string]solver.NodePool{}}
	claims := b.cluster.NodeClaims()
	nodes := b.addExistingPods(s)
	nominatedReq := b.addPendingPods(s, now)
	b.addExistingNodes(s, nodes, claims, nominatedReq, now)
	b.addDaemonSets(s)
	b.addInFlightClaims(s, claims, nominatedReq, now)
	skipped := b.addNodePools(s, pools, claims, classOf)
	b.applyOverlays(s)
	b.addCostUsage(s, claims)
	s.input.NamespaceLabels = b.namespaceLabels()
	s.input.MinValuesBestEffort = b.minValuesBestEffort
	if before != nil {
		before(s)
	}
	b.buffers.add(s, now)
	return s, skipped
}

// namespaceLabels are every namespace's labels (pod affinity
// namespaceSelectors select by them).
func (b *snapshots) namespaceLabels() map[string]map[string]string {
	nss, _ := b.cluster.Namespaces.List(labels.Everything())
	out := make(map[string]map[string]string, len(nss))
	for _, ns := range nss {
		out[ns.Name] = ns.Labels
	}
	return out
}

// addPendingPods adds the pending pods not nominated to a NodeClaim, and
// returns the requests of the nominated ones by NodeClaim (accounted on it).
func (b *snapshots) addPendingPods(s *snapshot, now time.Time) map[string]resources.List {
	pending := b.cluster.ProvisionablePods()
	waits := b.nominations.Explain(pending, now)
	s.lapsed = waits.Lapsed
	nominatedReq := map[string]resources.List{}
	for _, p := range pending {
		s.pending++
		sp := s.solverPod(p, s.attached)
		if nc, ok := waits.Claim[string(p.UID)]; ok {
			nominatedReq[nc] = nominatedReq[nc].Add(sp.Requests)
			s.nominated++
			continue
		}
		if node, ok := waits.Held[string(p.UID)]; ok {
			// The scheduler keeps its room there (pointed at it).
			if u, ok := s.used[node]; ok {
				s.used[node] = u.Add(sp.Requests)
			}
			s.held++
			continue
		}
		s.input.Pods = append(s.input.Pods, sp)
		s.podsByKey[p.Namespace+"/"+p.Name] = p
	}
	return nominatedReq
}

// addExistingPods adds the pods bound to any node (for topology spread
// and pod (anti-)affinity counting, and the host ports they hold) and what
// they use per node, and returns the nodes sorted by name.
func (b *snapshots) addExistingPods(s *snapshot) []*corev1.Node {
	nodes, _ := b.cluster.Nodes.List(labels.Everything())
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	s.used, s.attached = map[string]resources.List{}, solver.VolumeSet{}
	s.nodePool = make(map[string]string, len(nodes))
	onNode := map[string]solver.VolumeSet{}
	for _, n := range nodes {
		s.nodePool[n.Name] = n.Labels[apiv1.LabelNodePool]
		seen := solver.VolumeSet{}
		onNode[n.Name] = seen
		var used resources.List
		for _, p := range b.cluster.PodsOnNode(n.Name) {
			if !kube.IsActive(p) {
				continue
			}
			sp := s.solverPod(p, seen)
			used = used.Add(sp.Requests)
			s.input.ExistingPods = append(s.input.ExistingPods, solver.ExistingPod{Pod: sp, Node: n.Name, Zone: n.Labels[apiv1.LabelZone], Daemon: kube.IsDaemonSetPod(p)})
		}
		s.used[n.Name] = used
	}
	b.addPendingDaemonPods(s)
	vas, _ := b.cluster.VolumeAttachments.List(labels.Everything())
	sort.Slice(vas, func(i, j int) bool { return vas[i].Name < vas[j].Name })
	for _, va := range vas {
		if id := solver.AttachedEBS(va); id != "" && onNode[va.Spec.NodeName] != nil {
			u := s.used[va.Spec.NodeName]
			u[resources.EBSVolumes] += onNode[va.Spec.NodeName].Count([]string{id})
			s.used[va.Spec.NodeName] = u
		}
	}
	for _, seen := range onNode {
		for id := range seen {
			s.attached[id] = true
		}
	}
	return nodes
}

// addPendingDaemonPods counts each pending DaemonSet pod as used on the
// node it was made for: the scheduler binds it there once there is room,
// so the room is not free for other pods (Karpenter's existing nodes keep
// the DaemonSet pods not yet bound likewise). Without it a plan put pods
// in that room and left the node's DaemonSet pod pending for good.
func (b *snapshots) addPendingDaemonPods(s *snapshot) {
	for node, u := range s.used {
		for _, p := range b.cluster.PendingDaemonPodsFor(node) {
			if kube.IsActive(p) {
				u = u.Add(solver.Requests(p))
			}
		}
		s.used[node] = u
	}
}

// addExistingNodes adds the Ready nodes with their free capacity: their
// allocatable (EBS volumes: the attach limit their CSINode reports) less
// what their pods use and the pods nominated to them.
func (b *snapshots) addExistingNodes(s *snapshot, nodes []*corev1.Node, claims []*apiv1.NodeClaim, nominatedReq map[string]resources.List, now time.Time) {
	claimByNode := map[string]*apiv1.NodeClaim{}
	for _, nc := range claims {
		if nc.Status.NodeName != "" {
			claimByNode[nc.Status.NodeName] = nc
		}
	}
	ports := map[string][]solver.HostPort{}
	for _, ep := range s.input.ExistingPods {
		ports[ep.Node] = append(ports[ep.Node], ep.Pod.HostPorts...)
	}
	for _, n := range nodes {
		if n.Spec.Unschedulable || !lifecycle.Ready(n) || disruption.HasTaint(n.Spec.Taints, apiv1.TaintKeyDisrupted) || n.DeletionTimestamp != nil {
			continue
		}
		if nc := claimByNode[n.Name]; nc != nil && (nc.DeletionTimestamp != nil || booked(nc, now) || !initialized(n, nc)) {
			continue // terminating: its pods are about to move; booked for a gang's pods; or still booting (addInFlightClaims)
		}
		avail := b.allocatable(n).Sub(s.used[n.Name])
		if nc := claimByNode[n.Name]; nc != nil {
			avail = avail.Sub(nominatedReq[nc.Name])
		}
		s.input.ExistingNodes = append(s.input.ExistingNodes, solver.Node{
			Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints, Available: avail, NodePool: n.Labels[apiv1.LabelNodePool],
			HostPorts: ports[n.Name],
		})
	}
}

// addDaemonSets adds the DaemonSets whose pods new nodes will run, their
// templates admitted as their pods will be (solver.AdmittedDaemonSet: a
// RuntimeClass's overhead and scheduling). One whose pods admission
// rejects runs none; the DaemonSet controller reports that on it.
func (b *snapshots) addDaemonSets(s *snapshot) {
	dss, _ := b.cluster.DaemonSets.List(labels.Everything())
	sort.Slice(dss, func(i, j int) bool { return dss[i].Namespace+"/"+dss[i].Name < dss[j].Namespace+"/"+dss[j].Name })
	for _, ds := range dss {
		if d, why := solver.AdmittedDaemonSet(ds, b.runtimeClass); why == "" {
			s.input.DaemonSets = append(s.input.DaemonSets, d)
		}
	}
}

// runtimeClass reads a RuntimeClass from the informer cache (nil: none).
func (b *snapshots) runtimeClass(name string) *nodev1.RuntimeClass {
	o, _ := b.cluster.RuntimeClasses.Get(name)
	return o
}

// addInFlightClaims adds the NodeClaims whose Node is not initialized yet
// (none yet, or registered but not Ready, or still with startup taints) as
// nodes of their smallest possible shape, less the DaemonSet pods that will
// run on them and the nominated pods; a registered Node's labels and what
// its allocatable leaves free bound that. As in Karpenter, such a node
// counts with the taints it will have once initialized: a pod placed there
// joins the claim's nominees and is pointed at the node once it opens.
// Without the registered ones, the room on every node of a wave between
// registration and Ready (the CNI's start, seconds) was invisible to plans,
// and pods the scheduler displaced meanwhile bought nodes of their own.
func (b *snapshots) addInFlightClaims(s *snapshot, claims []*apiv1.NodeClaim, nominatedReq map[string]resources.List, now time.Time) {
	for _, nc := range claims {
		if nc.DeletionTimestamp != nil || booked(nc, now) {
			continue
		}
		node, booting := b.bootingNode(nc)
		if !booting {
			continue
		}
		avail, ok := b.inFlightAvailable(nc, s.input.DaemonSets)
		if !ok {
			continue
		}
		labels := claimLabels(nc)
		if node != nil {
			avail = registeredFree(avail, node, b.allocatable(node).Sub(s.used[node.Name]))
			maps.Copy(labels, node.Labels)
		}
		s.input.ExistingNodes = append(s.input.ExistingNodes, solver.Node{
			Name: "nodeclaim/" + nc.Name, Labels: labels, Taints: nc.Spec.Taints,
			Available: avail.Sub(nominatedReq[nc.Name]), NodePool: nc.Labels[apiv1.LabelNodePool],
		})
	}
}

// registeredFree bounds what a booting claim's registered Node has free by
// what its allocatable leaves (free): each resource the Node reports
// (extended resources register only once their device plugin runs).
func registeredFree(est resources.List, node *corev1.Node, free resources.List) resources.List {
	for i, name := range resources.Names {
		if _, ok := node.Status.Allocatable[name]; ok || i == resources.EBSVolumes {
			est[i] = min(est[i], free[i])
		}
	}
	return est
}

// bootingNode says whether the claim's node is still booting (no Node, or
// one not initialized) and returns its Node when registered.
func (b *snapshots) bootingNode(nc *apiv1.NodeClaim) (*corev1.Node, bool) {
	if nc.Status.NodeName == "" {
		return nil, true
	}
	node, err := b.cluster.Nodes.Get(nc.Status.NodeName)
	if err != nil {
		return nil, true
	}
	return node, !initialized(node, nc)
}

// initialized says whether the claim's Node is open to pods as planned:
// Ready, its startup and ephemeral taints gone.
func initialized(node *corev1.Node, nc *apiv1.NodeClaim) bool {
	ok, _, _ := lifecycle.Initialized(node, nc)
	return ok
}

// allocatable is the Node's allocatable, EBS volumes as its CSINode's
// attach limit.
func (b *snapshots) allocatable(n *corev1.Node) resources.List {
	alloc, _ := resources.FromResourceList(n.Status.Allocatable)
	cn, _ := b.cluster.CSINodes.Get(n.Name)
	alloc[resources.EBSVolumes] = solver.EBSLimit(cn)
	return alloc
}

// addNodePools adds the pools that can launch, with their instance types,
// zones and usage; it returns the ones skipped (class missing or not Ready).
func (b *snapshots) addNodePools(s *snapshot, pools []*apiv1.NodePool, claims []*apiv1.NodeClaim, classOf func(string) (*apiv1.EC2NodeClass, error)) []kube.InvalidNodePool {
	var skipped []kube.InvalidNodePool
	for _, np := range pools {
		if np.IsStatic() && !b.staticCapacity {
			skipped = append(skipped, kube.InvalidNodePool{Name: np.Name, Err: errors.New(
				"spec.replicas: static NodePools are off (Karpenter's alpha StaticCapacity gate): the pool is not honoured; run the worker with --feature-gates StaticCapacity=true")})
			continue
		}
		nodeClass, err := classOf(np.Spec.Template.Spec.NodeClassRef.Name)
		if err != nil {
			skipped = append(skipped, kube.InvalidNodePool{Name: np.Name, Err: fmt.Errorf("spec.template.spec.nodeClassRef: %w", err)})
			continue
		}
		if why := nodeclass.NotReady(nodeClass); why != "" {
			skipped = append(skipped, kube.InvalidNodePool{Name: np.Name, Err: errors.New(why), NodeClassNotReady: true})
			s.notReady = append(s.notReady, "NodePool "+np.Name+" skipped: "+why)
			continue
		}
		sp := solver.NodePoolFromMarket(np, nodeClass, b.types.Live(), b.market, zonesOf(nodeClass), b.ice.UnavailableIn(placementGroupOf(nodeClass)))
		sp.InstanceTypes = launchable(sp.InstanceTypes, nodeClass)
		for _, nc := range claims {
			if nc.Labels[apiv1.LabelNodePool] != np.Name || nc.DeletionTimestamp != nil {
				continue
			}
			if shape, ok := b.claimShape(nc, true); ok {
				sp.Usage = sp.Usage.Add(shape.Capacity)
			}
			sp.NodeCount++
		}
		s.pools[np.Name] = np
		if np.IsStatic() {
			s.static[np.Name] = sp
			continue
		}
		s.input.NodePools = append(s.input.NodePools, sp)
	}
	return skipped
}

// claimShape returns the node shape of a NodeClaim: its launched instance
// type when known, else over every instance type it may launch as the
// element-wise largest capacity (pessimistic=true, for limits) or smallest
// allocatable (false, for placing pods).
func (b *snapshots) claimShape(nc *apiv1.NodeClaim, pessimistic bool) (catalog.NodeShape, bool) {
	var names []string
	if t := nc.Labels[apiv1.LabelInstanceType]; t != "" {
		names = []string{t}
	} else {
		for _, r := range nc.Spec.Requirements {
			if r.Key == apiv1.LabelInstanceType && r.Operator == apiv1.OpIn {
				names = r.Values
			}
		}
	}
	launch, _ := b.pools.claimLaunch(nc)
	var out catalog.NodeShape
	found := false
	for _, n := range names {
		it, ok := b.types.Get(n)
		if !ok {
			continue
		}
		sh := it.ShapeOf(launch)
		switch {
		case !found:
			out = sh
		case pessimistic:
			out.Capacity = out.Capacity.Max(sh.Capacity)
			out.Allocatable = out.Allocatable.Max(sh.Allocatable)
		default:
			for i := range out.Allocatable {
				out.Allocatable[i] = min(out.Allocatable[i], sh.Allocatable[i])
				out.Capacity[i] = min(out.Capacity[i], sh.Capacity[i])
			}
		}
		found = true
	}
	return out, found
}

// inFlightAvailable is what an in-flight NodeClaim's node will have free
// for pods: over every instance type it may launch as (its launched type
// when known), the element-wise smallest allocatable less the daemonset
// overhead the solver reserves on a new claim of that type
// (solver.DaemonSetOverhead, with the claim's labels, requirements and
// taints as the pool). false when no type is known.
func (b *snapshots) inFlightAvailable(nc *apiv1.NodeClaim, dss []solver.DaemonSet) (resources.List, bool) {
	var names, zones []string
	if t := nc.Labels[apiv1.LabelInstanceType]; t != "" {
		names = []string{t}
	}
	for _, r := range nc.Spec.Requirements {
		switch {
		case r.Operator != apiv1.OpIn:
		case r.Key == apiv1.LabelInstanceType && len(names) == 0:
			names = r.Values
		case r.Key == apiv1.LabelZone:
			zones = append(zones, r.Values...)
		}
	}
	launch, cls := b.pools.claimLaunch(nc)
	if cls != nil {
		zones = append(zones, zonesOf(cls)...)
	}
	if z := nc.Labels[apiv1.LabelZone]; z != "" {
		zones = append(zones, z)
	}
	if len(zones) == 0 {
		if zones = b.market.Zones(); len(zones) == 0 {
			zones = catalog.DefaultZones // the embedded data's region
		}
	}
	zones = slices.Compact(slices.Sorted(slices.Values(zones)))
	// The claim as a pool of its own: its requirements, and its labels
	// both as labels and as requirements (they narrow type and offering).
	pool := solver.NodePool{Name: nc.Labels[apiv1.LabelNodePool], Labels: nc.Labels, Taints: nc.Spec.Taints,
		Requirements: slices.Clone(nc.Spec.Requirements)}
	for _, k := range slices.Sorted(maps.Keys(nc.Labels)) {
		pool.Requirements = append(pool.Requirements, apiv1.NodeSelectorRequirementWithMinValues{Key: k, Operator: apiv1.OpIn, Values: []string{nc.Labels[k]}})
	}
	for _, n := range names {
		if it, ok := b.types.Get(n); ok {
			pool.InstanceTypes = append(pool.InstanceTypes, solver.InstanceTypeOption{Type: it, Shape: it.ShapeOf(launch), Offerings: b.market.Offerings(it, zones)})
		}
	}
	if len(pool.InstanceTypes) == 0 {
		return resources.List{}, false
	}
	overhead := solver.DaemonSetOverhead(pool, dss)
	var out resources.List
	for i, it := range pool.InstanceTypes {
		free := it.Shape.Allocatable.Sub(overhead[i])
		if i == 0 {
			out = free
			continue
		}
		for r := range out {
			out[r] = min(out[r], free[r])
		}
	}
	return out, true
}

// claimLabels are the labels a NodeClaim's node will carry as far as known:
// template labels plus every single-valued In requirement.
func claimLabels(nc *apiv1.NodeClaim) map[string]string {
	l := map[string]string{}
	for k, v := range nc.Labels {
		l[k] = v
	}
	for _, r := range nc.Spec.Requirements {
		if r.Operator == apiv1.OpIn && len(r.Values) == 1 {
			l[r.Key] = r.Values[0]
		}
	}
	return l
}

// priceNodes sets each existing node's price (USD/hour) for SimulateRemoval.
func (b *snapshots) priceNodes(snap *snapshot) {
	for i := range snap.input.ExistingNodes {
		n := &snap.input.ExistingNodes[i]
		if node, err := b.cluster.Nodes.Get(n.Name); err == nil {
			n.Price = b.prices.Node(node)
		}
	}
}
