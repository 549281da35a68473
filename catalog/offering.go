package catalog

import apiv1 "github.com/joinery/joinery/api/v1"

// DefaultZones are the availability zones of the local world (us-east-1).
var DefaultZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// Offering is one way to buy an instance type: a zone and capacity type at a
// price (USD/hour). Available is false while the offering sits in the
// insufficient-capacity cache.
type Offering struct {
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	Available    bool    `json:"available"`
	// ReservationID is the capacity reservation a reserved offering
	// launches into (CapacityType "reserved"; "" for the others).
	ReservationID string `json:"reservationID,omitempty"`
	// ReservationType ("default" or "capacity-block") and
	// ReservationInterruptible describe a reserved offering's reservation
	// (the karpenter.k8s.aws/capacity-reservation-type and
	// -interruptible labels of its node).
	ReservationType          string `json:"reservationType,omitempty"`
	ReservationInterruptible bool   `json:"reservationInterruptible,omitempty"`
}

// Offerings returns on-demand and spot offerings of the type in each zone,
// on-demand first. Every priced type is taken to be sold in every zone: the
// public data has no per-zone offerings (data/README.md, gap a); the cloud
// adapter narrows this with DescribeInstanceTypeOfferings.
func (it *InstanceType) Offerings(zones []string) []Offering {
	out := make([]Offering, 0, 2*len(zones))
	for _, z := range zones {
		out = append(out, Offering{Zone: z, CapacityType: apiv1.CapacityTypeOnDemand, Price: it.OnDemandPrice, Available: true})
	}
	for _, z := range zones {
		out = append(out, Offering{Zone: z, CapacityType: apiv1.CapacityTypeSpot, Price: it.SpotPrice(), Available: true})
	}
	return out
}
