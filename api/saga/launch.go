package saga

// MaxOfferingsPerNodeClaim bounds the offerings a NodeClaim saga carries in
// its history (cheapest first): enough to fall back through several types
// and zones on insufficient capacity, small enough for big batches.
const MaxOfferingsPerNodeClaim = 20

// Replacement is the one node a consolidation decision launches, as its
// simulation found it and the strictly-cheaper rule cut it: the
// Consolidate saga creates exactly this NodeClaim, and the validation and
// the re-check before acting hold the fresh simulation to it.
type Replacement struct {
	NodePool string `json:"nodePool"`
	// InstanceTypes it may launch as, cheapest first: only types whose
	// worst-case launch price is below what the candidates cost (the
	// NodeClaim's instance-type requirement).
	InstanceTypes []string `json:"instanceTypes"`
	// Offerings the NodeClaim saga tries, cheapest first (at most
	// MaxOfferingsPerNodeClaim); spot only when CapacityType is pinned.
	Offerings []Offering `json:"offerings"`
	// Requirements are the simulation's (the pool's narrowed by the pods),
	// without the instance type, with the capacity type pinned when the
	// decision pins it.
	Requirements []Requirement `json:"requirements,omitempty"`
	// Requests are the pods' summed requests plus daemonset overhead
	// (resource name -> quantity), the NodeClaim's spec.resources.requests.
	Requests map[string]string `json:"requests,omitempty"`
	// Pods is how many pods the simulation moves onto it.
	Pods int `json:"pods"`
	// USDPerHour is its cheapest offering's price; MaxUSDPerHour the
	// worst-case launch price of its dearest type, strictly below the
	// candidates' summed price.
	USDPerHour    float64 `json:"usdPerHour"`
	MaxUSDPerHour float64 `json:"maxUsdPerHour"`
}

// Requirement is a NodeClaim requirement (karpenter.sh/v1
// NodeSelectorRequirementWithMinValues).
type Requirement struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

// Offering is one (instance type, zone, capacity type) a NodeClaim may launch
// as, with its price in USD/hour.
type Offering struct {
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	// ReservationID is the capacity reservation a "reserved" offering
	// launches into ("" otherwise; absent in older histories).
	ReservationID string `json:"reservationID,omitempty"`
}
