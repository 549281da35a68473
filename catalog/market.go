package catalog

import (
	"maps"
	"slices"
	"sync/atomic"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Market is the region-true, live part of what an instance type offers:
// the zones each type is sold in (EC2 DescribeInstanceTypeOfferings) and
// its spot price in each zone (the newest DescribeSpotPriceHistory point).
// Each part is replaced whole (SetZones, SetSpotPrices) and read without
// locks, so a refresh never shows a reader half of an answer.
//
// A Market belongs to one controller (one Activities): the embedded
// Catalog is shared by every in-process user, the Market never is. A nil
// *Market, and a Market holding no data, give the static offerings
// (InstanceType.Offerings): every zone, spot at the advisor's saving.
type Market struct {
	zones    atomic.Pointer[map[string][]string]
	spot     atomic.Pointer[map[string]map[string]float64]
	types    atomic.Pointer[Catalog]
	onDemand atomic.Pointer[map[string]float64]
	// reserved counts what each capacity reservation has left (reserved.go).
	reserved reservationCounts
	// memory is what registered nodes reported (nodememory.go).
	memory nodeMemory
	// blockExpiration is how long before its end a capacity block is
	// expiring (0: apiv1.CapacityBlockExpirationPeriod).
	blockExpiration atomic.Int64
}

// SetTypes replaces the instance types (EC2 DescribeInstanceTypes, made a
// Catalog by the cloud adapter). A nil or empty catalog clears them (the
// embedded catalog again).
func (m *Market) SetTypes(c *Catalog) {
	if c == nil || len(c.Types) == 0 {
		m.types.Store(nil)
		return
	}
	m.types.Store(c)
}

// Types is the catalog to plan with: the live instance types when the
// Market has them, else fallback (the embedded catalog). Nil-safe.
func (m *Market) Types(fallback *Catalog) *Catalog {
	if m != nil {
		if c := m.types.Load(); c != nil {
			return c
		}
	}
	return fallback
}

// SetOnDemandPrices replaces the on-demand prices: instance type ->
// USD/hour (the Pricing API's GetProducts). The Market keeps the map. An
// empty map clears them (each type's own OnDemandPrice again).
func (m *Market) SetOnDemandPrices(prices map[string]float64) {
	if len(prices) == 0 {
		m.onDemand.Store(nil)
		return
	}
	m.onDemand.Store(&prices)
}

// OnDemandPrice is the type's on-demand price (USD/hour): the live one when
// the Market has it, else the type's own (embedded) price. Nil-safe.
func (m *Market) OnDemandPrice(it *InstanceType) float64 {
	if m != nil {
		if p := m.onDemand.Load(); p != nil {
			if v, ok := (*p)[it.Name]; ok && v > 0 {
				return v
			}
		}
	}
	return it.OnDemandPrice
}

// KnownTypes and KnownOnDemand are how many instance types the Market has
// live facts and live on-demand prices for (0 on a nil Market or before
// any data).
func (m *Market) KnownTypes() int {
	if m == nil {
		return 0
	}
	if c := m.types.Load(); c != nil {
		return len(c.Types)
	}
	return 0
}

// KnownOnDemand: see KnownTypes.
func (m *Market) KnownOnDemand() int {
	if m == nil {
		return 0
	}
	if p := m.onDemand.Load(); p != nil {
		return len(*p)
	}
	return 0
}

// NewMarket returns a Market holding no data (static offerings until set).
func NewMarket() *Market { return &Market{} }

// SetZones replaces the zones of every type: instance type -> the zones
// EC2 offers it in. The Market keeps the map (the caller must not change
// it). An empty map clears the data (static offerings again).
func (m *Market) SetZones(zones map[string][]string) {
	if len(zones) == 0 {
		m.zones.Store(nil)
		return
	}
	m.zones.Store(&zones)
}

// SetSpotPrices replaces the spot prices: instance type -> zone -> USD/hour.
// The Market keeps the map (the caller must not change it). An empty map
// clears the data (the advisor's saving again).
func (m *Market) SetSpotPrices(prices map[string]map[string]float64) {
	if len(prices) == 0 {
		m.spot.Store(nil)
		return
	}
	m.spot.Store(&prices)
}

// Known reports how many instance types the Market has zones and spot
// prices for (0 and 0 on a nil Market or before any data).
func (m *Market) Known() (zoneTypes, spotTypes int) {
	if m == nil {
		return 0, 0
	}
	if z := m.zones.Load(); z != nil {
		zoneTypes = len(*z)
	}
	if s := m.spot.Load(); s != nil {
		spotTypes = len(*s)
	}
	return zoneTypes, spotTypes
}

// Zones is every zone the Market's zone data names, sorted (nil without
// zone data).
func (m *Market) Zones() []string {
	if m == nil {
		return nil
	}
	z := m.zones.Load()
	if z == nil {
		return nil
	}
	set := map[string]bool{}
	for _, zs := range *z {
		for _, zone := range zs {
			set[zone] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// offeredIn is whether the type is sold in the zone: true without zone
// data (the embedded fallback); with it, a type EC2 did not list is not
// sold in the region, as on AWS.
func (m *Market) offeredIn(name, zone string) bool {
	if m == nil {
		return true
	}
	z := m.zones.Load()
	if z == nil {
		return true
	}
	return slices.Contains((*z)[name], zone)
}

// spotPrice is the type's spot price in the zone: the live one when the
// Market has it, else the static one (on-demand times the advisor's saving).
func (m *Market) spotPrice(it *InstanceType, zone string) float64 {
	if m != nil {
		if s := m.spot.Load(); s != nil {
			if p, ok := (*s)[it.Name][zone]; ok && p > 0 {
				return p
			}
		}
	}
	od := m.OnDemandPrice(it)
	if it.SpotSavingsPct <= 0 {
		return od
	}
	return od * float64(100-it.SpotSavingsPct) / 100
}

// Offerings is InstanceType.Offerings made region-true: only the zones
// (of zones) the type is offered in, on-demand first, then spot at the
// zone's live spot price. A type the Market has no zones for is taken to
// be offered in every zone, and a (type, zone) without a live spot price
// is priced at the static spot price, as InstanceType.Offerings does.
func (m *Market) Offerings(it *InstanceType, zones []string) []Offering {
	if m == nil {
		return it.Offerings(zones)
	}
	in := make([]string, 0, len(zones))
	for _, z := range zones {
		if m.offeredIn(it.Name, z) {
			in = append(in, z)
		}
	}
	out := make([]Offering, 0, 2*len(in))
	for _, z := range in {
		out = append(out, Offering{Zone: z, CapacityType: apiv1.CapacityTypeOnDemand, Price: m.OnDemandPrice(it), Available: true})
	}
	for _, z := range in {
		out = append(out, Offering{Zone: z, CapacityType: apiv1.CapacityTypeSpot, Price: m.spotPrice(it, z), Available: true})
	}
	return out
}

// Price is what the type costs (USD/hour) in the zone under the capacity
// type: the on-demand price, or the zone's spot price (live when known).
// It does not ask whether the zone offers the type: it prices what runs.
func (m *Market) Price(it *InstanceType, zone, capacityType string) float64 {
	if capacityType == apiv1.CapacityTypeSpot {
		return m.spotPrice(it, zone)
	}
	if capacityType == apiv1.CapacityTypeReserved {
		return ReservedPrice(it)
	}
	return m.OnDemandPrice(it)
}
