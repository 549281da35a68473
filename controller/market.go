package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"go.uber.org/zap"
)

// Defaults of the live catalog's refresh periods (Config.OfferingsRefresh,
// Config.SpotPriceRefresh, Config.PricingRefresh; the worker's
// --offerings-refresh, --spot-price-refresh and --pricing-refresh). The
// instance types are read with the offerings; on-demand prices every 12 h,
// as Karpenter's pricing controller.
const (
	DefaultOfferingsRefresh = time.Hour
	DefaultSpotPriceRefresh = 5 * time.Minute
	DefaultPricingRefresh   = 12 * time.Hour
)

// Sources of the live catalog, the source label of its metrics.
const (
	sourceInstanceTypes  = "instance_types"
	sourceOfferings      = "offerings"
	sourceSpotPrices     = "spot_prices"
	sourceOnDemandPrices = "on_demand_prices"
)

// marketSource is what the live catalog is read from (cloud.Client).
type marketSource interface {
	InstanceTypes(ctx context.Context, embedded *catalog.Catalog) ([]*catalog.InstanceType, error)
	InstanceTypeZones(ctx context.Context) (map[string][]string, error)
	SpotPrices(ctx context.Context, now time.Time) (map[string]map[string]float64, error)
	OnDemandPrices(ctx context.Context) (map[string]float64, error)
}

// marketRefresher keeps a catalog.Market current: the instance types
// (DescribeInstanceTypes) and the zones of every type (with the types:
// hourly, and whenever an EC2NodeClass's spec changes), the spot prices
// (every 5 min) and the on-demand prices (Pricing API, every 12 h), each
// read once at start and then on its period. A failed or empty read leaves
// the Market as it was (the last good data, or none: the embedded data),
// logs a warning and counts joinery_catalog_refresh_errors_total{source}.
// Every replica runs one: each replica's activities plan with their own
// Market.
type marketRefresher struct {
	market                                  *catalog.Market
	embedded                                *catalog.Catalog
	source                                  marketSource
	offeringsEvery, spotEvery, pricingEvery time.Duration
	metrics                                 *metrics.Metrics
	log                                     *zap.Logger
	now                                     func() time.Time
	// changed is poked (NodeClassChanged) to read the types and offerings
	// again before their period ends.
	changed chan struct{}

	mu     sync.Mutex
	status map[string]SourceStatus
}

// SourceStatus is how one source of the live catalog stands: whether its
// last read failed, since when it has been good, and what the Market holds
// of it ("live" or the fallback in use).
type SourceStatus struct {
	Source      string    `json:"source"`
	Using       string    `json:"using"` // "live", "last good data", "embedded data"
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	Entries     int       `json:"entries"` // types (or prices) the live data holds
}

func newMarketRefresher(market *catalog.Market, embedded *catalog.Catalog, src marketSource, cfg Config, m *metrics.Metrics, log *zap.Logger) *marketRefresher {
	return &marketRefresher{market: market, embedded: embedded, source: src, offeringsEvery: cfg.OfferingsRefresh, spotEvery: cfg.SpotPriceRefresh,
		pricingEvery: cfg.PricingRefresh, metrics: m, log: log, now: time.Now, changed: make(chan struct{}, 1), status: map[string]SourceStatus{}}
}

// errEmpty is a read that succeeded with nothing in it: kept out of the
// Market (EC2 always sells something in a region).
var errEmpty = errors.New("empty answer")

// refreshTypes reads the instance types into the Market. A type needs an
// on-demand price to be planned (Karpenter offers no type it cannot
// price): the Pricing API's, else the embedded one; a type with neither
// is left out.
func (r *marketRefresher) refreshTypes(ctx context.Context) error {
	types, err := r.source.InstanceTypes(ctx, r.embedded)
	var live map[string]float64
	for _, it := range types {
		if p := r.market.OnDemandPrice(it); p > 0 {
			if live == nil {
				live = map[string]float64{}
			}
			live[it.Name] = p
		}
	}
	kept, unpriced := catalog.PriceTypes(types, live)
	if err == nil && len(kept) == 0 {
		err = errEmpty
	}
	if err != nil {
		r.failed(sourceInstanceTypes, err)
		return err
	}
	r.market.SetTypes(catalog.New(kept))
	r.succeeded(sourceInstanceTypes, len(kept))
	r.log.Debug("instance types refreshed", zap.Int("types", len(kept)), zap.Int("unpriced", unpriced))
	return nil
}

// refreshOfferings reads the zones of every type into the Market.
func (r *marketRefresher) refreshOfferings(ctx context.Context) error {
	zones, err := r.source.InstanceTypeZones(ctx)
	if err == nil && len(zones) == 0 {
		err = errEmpty
	}
	if err != nil {
		r.failed(sourceOfferings, err)
		return err
	}
	r.market.SetZones(zones)
	r.succeeded(sourceOfferings, len(zones))
	r.log.Debug("instance type offerings refreshed", zap.Int("types", len(zones)))
	return nil
}

// refreshSpotPrices reads the spot prices into the Market.
func (r *marketRefresher) refreshSpotPrices(ctx context.Context) error {
	prices, err := r.source.SpotPrices(ctx, r.now())
	if err == nil && len(prices) == 0 {
		err = errEmpty
	}
	if err != nil {
		r.failed(sourceSpotPrices, err)
		return err
	}
	r.market.SetSpotPrices(prices)
	r.succeeded(sourceSpotPrices, len(prices))
	r.log.Debug("spot prices refreshed", zap.Int("types", len(prices)))
	return nil
}

// refreshOnDemandPrices reads the on-demand prices into the Market.
func (r *marketRefresher) refreshOnDemandPrices(ctx context.Context) error {
	prices, err := r.source.OnDemandPrices(ctx)
	if err == nil && len(prices) == 0 {
		err = errEmpty
	}
	if err != nil {
		r.failed(sourceOnDemandPrices, err)
		return err
	}
	r.market.SetOnDemandPrices(prices)
	r.succeeded(sourceOnDemandPrices, len(prices))
	r.log.Debug("on-demand prices refreshed", zap.Int("types", len(prices)))
	return nil
}

// known is how many entries the Market holds of the source's live data.
func (r *marketRefresher) known(source string) int {
	zt, st := r.market.Known()
	switch source {
	case sourceInstanceTypes:
		return r.market.KnownTypes()
	case sourceOfferings:
		return zt
	case sourceSpotPrices:
		return st
	case sourceOnDemandPrices:
		return r.market.KnownOnDemand()
	}
	return 0
}

func (r *marketRefresher) succeeded(source string, n int) {
	now := r.now()
	r.metrics.CatalogRefreshed(source, float64(now.Unix()))
	r.mu.Lock()
	r.status[source] = SourceStatus{Source: source, Using: "live", LastSuccess: now, Entries: n}
	r.mu.Unlock()
}

func (r *marketRefresher) failed(source string, err error) {
	r.metrics.CatalogRefreshFailed(source)
	kept := "the embedded data"
	if r.known(source) > 0 {
		kept = "the last good data"
	}
	r.mu.Lock()
	st := r.status[source]
	st.Source, st.Using, st.LastError, st.Entries = source, kept[4:], err.Error(), r.known(source)
	r.status[source] = st
	r.mu.Unlock()
	r.log.Warn("live catalog refresh failed; planning with "+kept, zap.String("source", source), zap.Error(err))
}

// Status is how every source stands, in a fixed order (sources not read
// yet: "embedded data").
func (r *marketRefresher) Status() []SourceStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []SourceStatus
	for _, s := range []string{sourceInstanceTypes, sourceOfferings, sourceSpotPrices, sourceOnDemandPrices} {
		st, ok := r.status[s]
		if !ok {
			st = SourceStatus{Source: s, Using: "embedded data"}
		}
		out = append(out, st)
	}
	return out
}

// Summary is one line for people: each source, live or the fallback in
// use and the API error that put it there, e.g. "instance_types: embedded
// data (UnauthorizedOperation: You are not authorized to perform this
// operation.), offerings: live, ...".
func (r *marketRefresher) Summary() string {
	var parts []string
	for _, st := range r.Status() {
		p := st.Source + ": " + st.Using
		if st.Using != "live" && st.LastError != "" {
			e := st.LastError
			if _, after, ok := strings.Cut(e, "api error "); ok {
				e = after
			}
			p += " (" + e + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// NodeClassChanged asks for the types and offerings to be read again soon
// (an EC2NodeClass's spec changed); never blocks.
func (r *marketRefresher) NodeClassChanged() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// refreshTimeout bounds one read (the SDK retries inside it).
const refreshTimeout = time.Minute

// refreshAll reads every source once (at start), each within
// refreshTimeout: on-demand prices first (they price the types), then the
// types, the offerings and the spot prices.
func (r *marketRefresher) refreshAll(ctx context.Context) {
	r.each(ctx, r.refreshOnDemandPrices, r.refreshTypes, r.refreshOfferings, r.refreshSpotPrices)
}

func (r *marketRefresher) each(ctx context.Context, fs ...func(context.Context) error) {
	for _, f := range fs {
		c, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = f(c)
		cancel()
	}
}

// run reads every source at once, then each on its period until ctx ends.
func (r *marketRefresher) run(ctx context.Context) {
	r.refreshAll(ctx)
	offers, spot, pricing := time.NewTicker(r.offeringsEvery), time.NewTicker(r.spotEvery), time.NewTicker(r.pricingEvery)
	defer offers.Stop()
	defer spot.Stop()
	defer pricing.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-offers.C:
			r.each(ctx, r.refreshTypes, r.refreshOfferings)
		case <-r.changed:
			r.each(ctx, r.refreshTypes, r.refreshOfferings)
		case <-spot.C:
			r.each(ctx, r.refreshSpotPrices)
		case <-pricing.C:
			r.each(ctx, r.refreshOnDemandPrices)
		}
	}
}
