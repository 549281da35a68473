package solver

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"strconv"
)

// NodePoolFromAPI precomputes what the solver needs of a NodePool: its
// weight, requirements, template labels and taints (startup taints are left
// out: they go away), limits (any resource, plus "nodes" as NodesLimit, -1
// when absent), and InstanceTypes: every catalog type whose labels meet the
// pool's requirements on instance-type labels, that nc can launch
// (catalog.InstanceType.Launchable: its CPU options), and that has at
// least one available offering, among zones, meeting its zone /
// capacity-type / region requirements. Each type carries only those
// compatible offerings (with their Available flag from unavailable, which
// may be nil) and its node
// shape under nc's kubelet settings and root volume size (EKS defaults and
// 20 GiB when nc is nil). Usage and NodeCount are left for the caller.
// Offerings are the static ones (InstanceType.Offerings): every zone, spot
// at the advisor's saving; NodePoolFromMarket takes live ones.
func NodePoolFromAPI(np *apiv1.NodePool, nc *apiv1.EC2NodeClass, cat *catalog.Catalog, zones []string,
	unavailable func(instanceType, zone, capacityType string) bool) NodePool {
	return NodePoolFromMarket(np, nc, cat, nil, zones, unavailable)
}

// NodePoolFromMarket is NodePoolFromAPI with each type's offerings from
// market (catalog.Market.Offerings: only the zones the type is offered
// in, spot at the zone's price); a nil market gives the static offerings.
func NodePoolFromMarket(np *apiv1.NodePool, nc *apiv1.EC2NodeClass, cat *catalog.Catalog, market *catalog.Market, zones []string,
	unavailable func(instanceType, zone, capacityType string) bool) NodePool {
	out := NodePool{
		Name:         np.Name,
		Weight:       np.WeightOrZero(),
		Requirements: make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(np.Spec.Template.Spec.Requirements)),
		Taints:       append([]corev1.Taint(nil), np.Spec.Template.Spec.Taints...),
		NodesLimit:   -1,
	}
	for _, r := range np.Spec.Template.Spec.Requirements {
		out.Requirements = append(out.Requirements, copyReq(r))
	}
	if l := np.Spec.Template.ObjectMeta.Labels; len(l) > 0 {
		out.Labels = make(map[string]string, len(l)+1)
		for k, v := range l {
			out.Labels[k] = v
		}
	}
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name != "" {
		// As Karpenter labels every NodeClaim with its class (a template
		// label in effect: pods may select it, nodes carry it).
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[apiv1.NodeClassLabelKey(ref)] = ref.Name
	}
	out.setLimits(np.Spec.Limits)
	// Its nodes carry the class's placement group (Karpenter puts it in
	// every type's requirements): pods may select it.
	if nc != nil && nc.Status.PlacementGroup != nil {
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[apiv1.LabelPlacementGroupID] = nc.Status.PlacementGroup.ID
		out.partitionDomains(nc.Status.PlacementGroup)
	}
	out.CostLimit, out.HasCostLimit = np.CostLimit()

	launch := market.LaunchOf(nc)

	var typeReqs, offeringReqs []apiv1.NodeSelectorRequirementWithMinValues
	for _, r := range out.Requirements {
		switch {
		case typeLevelKeys[r.Key]:
			typeReqs = append(typeReqs, r)
		case isOfferingKey(r.Key):
			offeringReqs = append(offeringReqs, r)
		}
	}
	if cat == nil {
		return out
	}
	// Reserved offerings only for a pool whose capacity-type requirements
	// name a key that admits "reserved" (as Karpenter: a pool that says
	// nothing about capacity types does not use reservations).
	var reservations []apiv1.CapacityReservationStatus
	if nc != nil && admitsReserved(out.Requirements) {
		reservations = nc.Status.CapacityReservations
	}
	for _, it := range cat.Types {
		it = it.For(nc)
		labels := it.Labels()
		ok := true
		for _, r := range typeReqs {
			v, has := labels[r.Key]
			if !r.Matches(v, has) {
				ok = false
				break
			}
		}
		if !ok || !it.Launchable(nc) {
			continue
		}
		offs, available := matchingOfferings(it, market, zones, reservations, offeringReqs, unavailable)
		if !available {
			continue
		}
		out.InstanceTypes = append(out.InstanceTypes, InstanceTypeOption{Type: it, Shape: it.ShapeOf(launch), Offerings: offs})
	}
	return out
}

// setLimits reads the pool's spec.limits: nodes into NodesLimit, the
// resources the solver models into Limits (CPU in millicores).
func (out *NodePool) setLimits(limits corev1.ResourceList) {
	for name, q := range limits {
		if name == "nodes" {
			out.NodesLimit = int(q.Value())
			continue
		}
		i := resources.IndexOf(name)
		if i < 0 || i == resources.EBSVolumes {
			continue
		}
		out.HasLimit[i] = true
		if i == resources.CPU {
			out.Limits[i] = q.MilliValue()
		} else {
			out.Limits[i] = q.Value()
		}
	}
}

// matchingOfferings are the type's offerings in zones (and its
// reservations') that meet the pool's offering requirements, those
// unavailable marked so; available is false when none is available.
func matchingOfferings(it *catalog.InstanceType, market *catalog.Market, zones []string, reservations []apiv1.CapacityReservationStatus,
	offeringReqs []apiv1.NodeSelectorRequirementWithMinValues, unavailable func(instanceType, zone, capacityType string) bool) (offs []catalog.Offering, available bool) {
	all := market.Offerings(it, zones)
	if len(reservations) > 0 {
		all = append(all, market.ReservedOfferings(it, reservations, zones)...)
	}
	for _, o := range all {
		match := true
		for _, r := range offeringReqs {
			v, has := offeringValue(r.Key, &o)
			if !r.Matches(v, has) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if unavailable != nil && unavailable(it.Name, o.Zone, o.CapacityType) {
			o.Available = false
		}
		available = available || o.Available
		offs = append(offs, o)
	}
	return offs, available
}

// admitsReserved reports whether requirements have a capacity-type
// requirement and all of them admit "reserved".
func admitsReserved(reqs []apiv1.NodeSelectorRequirementWithMinValues) bool {
	found := false
	for _, r := range reqs {
		if r.Key == apiv1.LabelCapacityType {
			if !r.Matches(apiv1.CapacityTypeReserved, true) {
				return false
			}
			found = true
		}
	}
	return found
}

// DaemonSetOverhead is, for each of pool.InstanceTypes in order, the summed
// requests of the DaemonSet pods that would run on a node of that type of
// the pool: the overhead Solve reserves on a new NodeClaim of the type (the
// pod tolerates the pool's taints and one of its node affinity terms, with
// its node selector, meets the pool's labels and requirements, the type
// and one of the type's available offerings meeting the requirements; see
// addDaemonSets). A type with no such offering gets none. The caller uses
// it for nodes not yet registered, whose DaemonSet pods are not bound yet.
func DaemonSetOverhead(pool NodePool, dss []DaemonSet) []resources.List {
	pl := newPoolInfo(&pool, 0)
	pl.addDaemonSets(sortedDaemonSets(dss))
	byName := make(map[string]resources.List, len(pl.types))
	for t := range pl.types {
		byName[pl.types[t].name] = pl.overhead[t]
	}
	out := make([]resources.List, len(pool.InstanceTypes))
	for i, it := range pool.InstanceTypes {
		if it.Type != nil {
			out[i] = byName[it.Type.Name]
		}
	}
	return out
}

// partitionDomains makes a partition group's partitions the domains of
// the placement-group-partition key, as Karpenter puts them in every
// type's requirements: pods may spread over them or select one, and a
// NodeClaim is given one only then (an optional free key). A pool that
// names partitions itself keeps its own requirement.
func (out *NodePool) partitionDomains(pg *apiv1.PlacementGroupStatus) {
	if pg.Strategy != apiv1.PlacementStrategyPartition || pg.PartitionCount <= 0 {
		return
	}
	for _, r := range out.Requirements {
		if r.Key == apiv1.LabelPlacementGroupPartition {
			return
		}
	}
	values := make([]string, pg.PartitionCount)
	for i := range values {
		values[i] = strconv.Itoa(i + 1)
	}
	out.Requirements = append(out.Requirements, apiv1.NodeSelectorRequirementWithMinValues{
		Key: apiv1.LabelPlacementGroupPartition, Operator: apiv1.OpIn, Values: values})
	out.OptionalFreeKeys = map[string]bool{apiv1.LabelPlacementGroupPartition: true}
}
