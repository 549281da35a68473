package disruption

import (
	"slices"
	"sort"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// ReasonInstanceTypeNotFound is Karpenter's drift reason for a node whose
// instance type, or whose zone and capacity type of it, its EC2NodeClass
// no longer offers.
const ReasonInstanceTypeNotFound = "InstanceTypeNotFound"

// Offered is what an EC2NodeClass can launch, Karpenter's
// GetInstanceTypes(nodePool): every instance type the class can launch,
// by name, with all its offerings, available or not (an offering in the
// insufficient-capacity cache is still offered: ICE is temporary and
// must not drift a node). It is not narrowed by any NodePool's
// requirements (those are RequirementsDrift's). A nil Offered is not
// known: nothing drifts on it.
type Offered map[string][]catalog.Offering

// ClassOfferings is what cls can launch according to the live catalog in
// market: the types EC2 describes that the class can launch
// (catalog.InstanceType.Launchable), each with its on-demand and spot
// offerings in the zones of the class's subnets that EC2 sells it in, and
// a reserved offering per capacity reservation the class's status lists
// for it in those zones (whatever the reservation's state or what it has
// left). It is nil, so never a drift, until the market holds live
// instance types (the embedded catalog is a fallback to plan with, not
// the region's truth: a type missing from it says nothing) or while the
// class has no resolved subnet (its zones are not known yet).
func ClassOfferings(cls *apiv1.EC2NodeClass, market *catalog.Market) Offered {
	if cls == nil || market.KnownTypes() == 0 || len(cls.Status.Subnets) == 0 {
		return nil
	}
	cat := market.Types(nil)
	if cat == nil {
		return nil
	}
	var zones []string
	for _, s := range cls.Status.Subnets {
		if s.Zone != "" && !slices.Contains(zones, s.Zone) {
			zones = append(zones, s.Zone)
		}
	}
	sort.Strings(zones)
	out := make(Offered, len(cat.Types))
	for _, it := range cat.Types {
		if !it.Launchable(cls) {
			continue
		}
		offs := market.Offerings(it, zones)
		for _, r := range cls.Status.CapacityReservations {
			if r.InstanceType == it.Name && slices.Contains(zones, r.AvailabilityZone) {
				offs = append(offs, catalog.Offering{Zone: r.AvailabilityZone, CapacityType: apiv1.CapacityTypeReserved, ReservationID: r.ID})
			}
		}
		out[it.Name] = offs
	}
	return out
}

// InstanceTypeDrift says why the claim's node is no longer offered to its
// class ("": it is, or offered is nil), as Karpenter's drift check: the
// claim's instance-type label names no type of offered (a claim without
// the label is not found either), or none of the type's offerings agrees
// with the claim's zone, capacity type and, for reserved, capacity
// reservation labels (a label the claim lacks agrees with any).
func InstanceTypeDrift(claim *apiv1.NodeClaim, offered Offered, class string) string {
	if offered == nil {
		return ""
	}
	name, ok := claim.Labels[apiv1.LabelInstanceType]
	if !ok || name == "" {
		return "NodeClaim has no " + apiv1.LabelInstanceType + " label"
	}
	offs, ok := offered[name]
	if !ok {
		return "instance type " + name + " is no longer offered to EC2NodeClass " + class
	}
	zone, hasZone := claim.Labels[apiv1.LabelZone]
	ct, hasCT := claim.Labels[apiv1.LabelCapacityType]
	res, hasRes := claim.Labels[apiv1.LabelCapacityReservationID]
	for _, o := range offs {
		if (!hasZone || o.Zone == zone) && (!hasCT || o.CapacityType == ct) &&
			(!hasRes || o.CapacityType != apiv1.CapacityTypeReserved || o.ReservationID == res) {
			return ""
		}
	}
	what := "instance type " + name + " is no longer offered to EC2NodeClass " + class
	if hasZone {
		what += " in zone " + zone
	}
	if hasCT {
		what += " as " + ct
	}
	if hasRes && ct == apiv1.CapacityTypeReserved {
		what += " (capacity reservation " + res + ")"
	}
	return what
}
