package ec2

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/catalog"
)

// DefaultNotOffered is the local world's fixed rule for which instance
// types a zone does not sell (Options.NotOffered): by zone, the instance
// families absent from it, as newer families roll out zone by zone on EC2.
// It leaves alone every type the examples and tests name (m5, m6i, m6a,
// m6g, m7g, c5, c6a, c6i, c7i, r6i, r6a, g4dn, g5, inf2 ...).
var DefaultNotOffered = map[string][]string{
	"us-east-1a": {"c6in", "m6in", "r6in"},
	"us-east-1c": {"c7a", "m7a", "r7a"},
}

// OnDemandPrice is the region's on-demand price of the type: the
// catalog's (us-east-1) price times Options.PriceFactor, rounded to
// 1/10000 USD as the local Pricing endpoint lists it (sim/pricing.Price).
func (s *Server) OnDemandPrice(it *catalog.InstanceType) float64 {
	if s.opts.PriceFactor == 1 {
		return it.OnDemandPrice
	}
	return math.Round(it.OnDemandPrice*s.opts.PriceFactor*10000) / 10000
}

// ZonesOf are the local world's zones of a region: its a, b and c
// (catalog.DefaultZones for us-east-1).
func ZonesOf(region string) []string {
	return []string{region + "a", region + "b", region + "c"}
}

// NotOfferedIn is DefaultNotOffered's rule for any three zones: the
// first zone lacks what us-east-1a lacks, the third what us-east-1c lacks.
func NotOfferedIn(zones []string) map[string][]string {
	out := map[string][]string{}
	if len(zones) > 0 {
		out[zones[0]] = DefaultNotOffered["us-east-1a"]
	}
	if len(zones) > 2 {
		out[zones[2]] = DefaultNotOffered["us-east-1c"]
	}
	return out
}

// ProductLinux is the only product description the endpoint has spot
// prices for.
const ProductLinux = "Linux/UNIX"

// spotZoneSpread is how far a zone's spot price strays from the catalog's
// (region-wide) one: a factor in [1-spotZoneSpread, 1+spotZoneSpread].
const spotZoneSpread = 0.10

// Offered reports whether the zone sells the instance type: it is in the
// catalog, the zone is one of the server's, and Options.NotOffered does
// not name its family in the zone. DescribeInstanceTypeOfferings lists
// only offered pairs, and CreateFleet refuses an override of a pair that
// is not (Unsupported), as EC2 does.
func (s *Server) Offered(instanceType, zone string) bool {
	it, ok := s.opts.Catalog.Get(instanceType)
	return ok && slices.Contains(s.opts.Zones, zone) && s.offered(it, zone)
}

func (s *Server) offered(it *catalog.InstanceType, zone string) bool {
	return !slices.Contains(s.opts.NotOffered[zone], it.Family)
}

// offeredZones are the server's zones that sell the type.
func (s *Server) offeredZones(it *catalog.InstanceType) []string {
	var out []string
	for _, z := range s.opts.Zones {
		if s.offered(it, z) {
			out = append(out, z)
		}
	}
	return out
}

// spotPoint is one spot price change of an (instance type, zone).
type spotPoint struct {
	at    time.Time
	price float64
}

// zoneSpotPrice is the local world's initial spot price of the type in the
// zone: the catalog's spot price (on-demand times the Spot Instance
// Advisor's saving, times Options.PriceFactor) times a factor in [0.9,
// 1.1] drawn from a hash of the type and zone, rounded to 1/10000 USD, so
// zones differ deterministically.
func (s *Server) zoneSpotPrice(it *catalog.InstanceType, zone string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(it.Name + "/" + zone))
	f := 1 - spotZoneSpread + 2*spotZoneSpread*float64(h.Sum64()%10001)/10000
	return max(math.Round(it.SpotPrice()*s.opts.PriceFactor*f*10000)/10000, 0.0001)
}

// spotHistoryLocked is the spot price history of the type in the zone,
// oldest first: the initial price from the server's start, then every
// SetSpotPrice.
func (s *Server) spotHistoryLocked(it *catalog.InstanceType, zone string) []spotPoint {
	first := spotPoint{at: s.started, price: s.zoneSpotPrice(it, zone)}
	return append([]spotPoint{first}, s.spotMoves[[2]string{it.Name, zone}]...)
}

// spotPriceLocked is the current spot price of the type in the zone.
func (s *Server) spotPriceLocked(it *catalog.InstanceType, zone string) float64 {
	if moves := s.spotMoves[[2]string{it.Name, zone}]; len(moves) > 0 {
		return moves[len(moves)-1].price
	}
	return s.zoneSpotPrice(it, zone)
}

// SpotPrice is the current spot price (USD/hour) of the type in the zone;
// false when the zone does not sell it.
func (s *Server) SpotPrice(instanceType, zone string) (float64, bool) {
	if !s.Offered(instanceType, zone) {
		return 0, false
	}
	it, _ := s.opts.Catalog.Get(instanceType)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spotPriceLocked(it, zone), true
}

// SetSpotPrice moves the spot price of the type in the zone to price
// (USD/hour) from now on: DescribeSpotPriceHistory shows a new point and
// CreateFleet's spot launches pay it. The pair must be offered and the
// price positive.
func (s *Server) SetSpotPrice(instanceType, zone string, price float64) error {
	if !s.Offered(instanceType, zone) {
		return fmt.Errorf("SetSpotPrice: %s is not offered in zone %q (zones %v)", instanceType, zone, s.opts.Zones)
	}
	if !(price > 0) || math.IsInf(price, 0) {
		return fmt.Errorf("SetSpotPrice %s/%s: price %v: want a positive number of USD/hour", instanceType, zone, price)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{instanceType, zone}
	// Millisecond timestamps, as the API's: a second move within the same
	// millisecond replaces the first, which was never in effect.
	now := time.Now().UTC().Truncate(time.Millisecond)
	if moves := s.spotMoves[k]; len(moves) > 0 && !now.After(moves[len(moves)-1].at) {
		moves[len(moves)-1].price = price
		return nil
	}
	s.spotMoves[k] = append(s.spotMoves[k], spotPoint{at: now, price: price})
	return nil
}

type spotPriceItem struct {
	key          uint64
	instanceType string
	zone         string
	price        float64
	at           time.Time
}

// describeSpotPriceHistory answers the prices in effect between StartTime
// (default: the beginning) and EndTime (default: now): per (type, zone),
// the point in effect at StartTime and every later one up to EndTime,
// newest first. Only ProductLinux has prices; InstanceType.N,
// ProductDescription.N, AvailabilityZone and the filters instance-type,
// product-description, availability-zone and spot-price narrow the answer.
func (s *Server) describeSpotPriceHistory(f form) (withRequestID, error) {
	start, err := timeParam(f.get("StartTime"), "startTime")
	if err != nil {
		return nil, err
	}
	end, err := timeParam(f.get("EndTime"), "endTime")
	if err != nil {
		return nil, err
	}
	if end.IsZero() {
		end = time.Now().UTC()
	}
	if !start.IsZero() && start.After(end) {
		return nil, invalidParameter("The start time %s is after the end time %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	types := f.strings("InstanceType")
	for _, n := range types {
		if _, ok := s.opts.Catalog.Get(n); !ok {
			return nil, invalidParameter("Invalid value '%s' for InstanceType", n)
		}
	}
	products := f.strings("ProductDescription")
	if len(products) > 0 && !slices.Contains(products, ProductLinux) {
		products = nil // no prices for other products
	} else {
		products = []string{ProductLinux}
	}
	zone := f.get("AvailabilityZone")
	if zone != "" && !slices.Contains(s.opts.Zones, zone) {
		return nil, invalidParameter("Invalid availability zone: [%s]", zone)
	}
	var items []spotPriceItem
	s.mu.Lock()
	for ti, it := range s.opts.Catalog.Types {
		if (len(types) > 0 && !slices.Contains(types, it.Name)) || len(products) == 0 {
			continue
		}
		for zi, z := range s.opts.Zones {
			if (zone != "" && z != zone) || !s.offered(it, z) {
				continue
			}
			hist := s.spotHistoryLocked(it, z)
			for rank, i := 0, len(hist)-1; i >= 0; i-- {
				p := hist[i]
				if p.at.After(end) {
					continue
				}
				items = append(items, spotPriceItem{key: uint64(ti)<<24 | uint64(zi)<<16 | uint64(rank),
					instanceType: it.Name, zone: z, price: p.price, at: p.at})
				rank++
				if !start.IsZero() && !p.at.After(start) {
					break // the point in effect at StartTime is the oldest shown
				}
			}
		}
	}
	s.mu.Unlock()
	items, next, err := filterPage(f, items, fields[spotPriceItem]{
		"instance-type":       func(o spotPriceItem) []string { return []string{o.instanceType} },
		"availability-zone":   func(o spotPriceItem) []string { return []string{o.zone} },
		"product-description": func(spotPriceItem) []string { return []string{ProductLinux} },
		"spot-price":          func(o spotPriceItem) []string { return []string{formatSpotPrice(o.price)} },
	}, nil, func(o spotPriceItem) uint64 { return o.key }, "spotprices", 1000, 1, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeSpotPriceHistoryResponse{NextToken: next}
	for _, o := range items {
		out.Prices = append(out.Prices, spotPriceXML{InstanceType: o.instanceType, ProductDescription: ProductLinux,
			SpotPrice: formatSpotPrice(o.price), Timestamp: o.at.UTC().Format("2006-01-02T15:04:05.000Z"), AvailabilityZone: o.zone})
	}
	return out, nil
}

// formatSpotPrice writes a price as EC2 does ("0.034400").
func formatSpotPrice(p float64) string { return strconv.FormatFloat(p, 'f', 6, 64) }

// timeParam parses an ISO 8601 timestamp parameter (zero when absent).
func timeParam(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalidParameter("Invalid value '%s' for %s. Expected an ISO 8601 timestamp", v, name)
}

type describeSpotPriceHistoryResponse struct {
	meta
	Prices    []spotPriceXML `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

type spotPriceXML struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
}

// unsupportedInZone is EC2's message for a type a zone does not sell.
func unsupportedInZone(instanceType, zone string, offered []string) string {
	msg := fmt.Sprintf("Your requested instance type (%s) is not supported in your requested Availability Zone (%s).", instanceType, zone)
	if len(offered) > 0 {
		msg += " Please retry your request by not specifying an Availability Zone or choosing " + strings.Join(offered, ", ") + "."
	}
	return msg
}
