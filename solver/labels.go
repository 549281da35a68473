package solver

import (
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// Where a label key's value on a new node comes from.
const (
	keyType     = iota // instance-type label: fixed per instance type (catalog.InstanceType.Labels)
	keyOffering        // zone, region, capacity type: fixed per offering
	keyConst           // karpenter.sh/nodepool or a template label: fixed per NodePool
	keyFree            // defined only by a NodePool requirement: chosen per NodeClaim
	keyAbsent          // nothing sets it: the node will not carry the label
)

// typeLevelKeys are the labels catalog.InstanceType.Labels may set. A key in
// this set that a type lacks (e.g. instance-gpu-count on m5.large) is absent
// on nodes of that type.
var typeLevelKeys = map[string]bool{
	apiv1.LabelInstanceType:     true,
	apiv1.LabelArch:             true,
	apiv1.LabelOS:               true,
	apiv1.LabelWindowsBuild:     true,
	apiv1.LabelInstanceFamily:   true,
	apiv1.LabelInstanceCategory: true,
	apiv1.LabelInstanceGen:      true,
	apiv1.LabelInstanceSize:     true,
	apiv1.LabelInstanceCPU:      true,
	apiv1.LabelInstanceCPUManu:  true,
	apiv1.LabelInstanceMemory:   true,
	apiv1.LabelInstanceHypervis: true,
	apiv1.LabelInstanceGPUCount: true,
	apiv1.LabelInstanceGPUName:  true,
	apiv1.LabelInstanceGPUManu:  true,
	apiv1.LabelInstanceGPUMem:   true,
	apiv1.LabelInstanceAccCount: true,
	apiv1.LabelInstanceAccName:  true,
	apiv1.LabelInstanceAccManu:  true,
	apiv1.LabelInstanceNVMe:     true,
	apiv1.LabelInstanceNetBW:    true,
	apiv1.LabelInstanceEBSBW:    true,
}

// isOfferingKey reports whether the key's value depends on the offering.
func isOfferingKey(key string) bool {
	return key == apiv1.LabelZone || key == apiv1.LabelCapacityType || key == apiv1.LabelRegion || key == apiv1.LabelCapacityReservationID ||
		key == apiv1.LabelCapacityReservationType || key == apiv1.LabelCapacityReservationInterruptible
}

// offeringValue is the value of an offering-level label for an offering.
func offeringValue(key string, o *catalog.Offering) (string, bool) {
	switch key {
	case apiv1.LabelZone:
		return o.Zone, o.Zone != ""
	case apiv1.LabelCapacityType:
		return o.CapacityType, o.CapacityType != ""
	case apiv1.LabelRegion:
		r := regionOf(o.Zone)
		return r, r != ""
	case apiv1.LabelCapacityReservationID:
		return o.ReservationID, o.ReservationID != ""
	case apiv1.LabelCapacityReservationType:
		return o.ReservationType, o.ReservationID != "" && o.ReservationType != ""
	case apiv1.LabelCapacityReservationInterruptible:
		return strconv.FormatBool(o.ReservationInterruptible), o.ReservationID != ""
	}
	return "", false
}

// regionOf derives the region from a zone name: "us-east-1a" and the local
// zone "us-east-1-bos-1a" both give "us-east-1".
func regionOf(zone string) string {
	parts := strings.SplitN(zone, "-", 4)
	if len(parts) < 3 {
		return ""
	}
	last := strings.TrimRight(parts[2], "abcdefghijklmnopqrstuvwxyz")
	return parts[0] + "-" + parts[1] + "-" + last
}

// satisfiable reports whether one node label state (absent, or some value)
// meets every requirement in reqs, all of which are on the same key. It tries
// absence, every In value, integers from every integer bound on, and a value
// no requirement names.
func satisfiable(reqs []apiv1.NodeSelectorRequirementWithMinValues) bool {
	all := func(v string, has bool) bool {
		for _, r := range reqs {
			if !r.Matches(v, has) {
				return false
			}
		}
		return true
	}
	if all("", false) {
		return true
	}
	n := 0
	for _, r := range reqs {
		n += len(r.Values)
	}
	for _, r := range reqs {
		switch r.Operator {
		case apiv1.OpIn:
			for _, v := range r.Values {
				if all(v, true) {
					return true
				}
			}
		case apiv1.OpGt, apiv1.OpLt, apiv1.OpGte, apiv1.OpLte:
			if len(r.Values) != 1 {
				continue
			}
			b, err := strconv.ParseInt(r.Values[0], 10, 64)
			if err != nil {
				continue
			}
			step, first := int64(1), int64(1)
			if r.Operator == apiv1.OpLt || r.Operator == apiv1.OpLte {
				step = -1
			}
			if r.Operator == apiv1.OpGte || r.Operator == apiv1.OpLte {
				first = 0 // the bound itself is admitted
			}
			for k := first; k <= int64(n)+1; k++ {
				if all(strconv.FormatInt(b+step*k, 10), true) {
					return true
				}
			}
		}
	}
	// A value no requirement names satisfies Exists and NotIn.
	fresh := "joinery-unnamed-value"
	for named(reqs, fresh) {
		fresh += "-x"
	}
	return all(fresh, true)
}

func named(reqs []apiv1.NodeSelectorRequirementWithMinValues, v string) bool {
	for _, r := range reqs {
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
	}
	return false
}
