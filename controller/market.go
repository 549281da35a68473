package controller

import (
	"context"
	"errors"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/metrics"
	"go.uber.org/zap"
)

// Defaults of the live catalog's refresh periods (Config.OfferingsRefresh,
// Config.SpotPriceRefresh; the worker's --offerings-refresh and
// --spot-price-refresh).
const (
	DefaultOfferingsRefresh = time.Hour
	DefaultSpotPriceRefresh = 5 * time.Minute
)

// Sources of the live catalog, the source label of its metrics.
const (
	sourceOfferings  = "offerings"
	sourceSpotPrices = "spot_prices"
)

// marketSource is what the live catalog is read from (cloud.Client).
type marketSource interface {
	InstanceTypeZones(ctx context.Context) (map[string][]string, error)
	SpotPrices(ctx context.Context, now time.Time) (map[string]map[string]float64, error)
}

// marketRefresher keeps a catalog.Market current: the zones of every type
// and the spot prices, each read once at start and then on its period. A
// failed or empty read leaves the Market as it was (the last good data, or
// none: the embedded data), logs a warning and counts
// joinery_catalog_refresh_errors_total{source}. Every replica runs one:
// each replica's activities plan with their own Market.
type marketRefresher struct {
	market                    *catalog.Market
	source                    marketSource
	offeringsEvery, spotEvery time.Duration
	metrics                   *metrics.Metrics
	log                       *zap.Logger
	now                       func() time.Time
}

func newMarketRefresher(market *catalog.Market, src marketSource, cfg Config, m *metrics.Metrics, log *zap.Logger) *marketRefresher {
	return &marketRefresher{market: market, source: src, offeringsEvery: cfg.OfferingsRefresh, spotEvery: cfg.SpotPriceRefresh,
		metrics: m, log: log, now: time.Now}
}

// errEmpty is a read that succeeded with nothing in it: kept out of the
// Market (EC2 always sells something in a region).
var errEmpty = errors.New("empty answer")

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
	r.metrics.CatalogRefreshed(sourceOfferings, float64(r.now().Unix()))
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
	r.metrics.CatalogRefreshed(sourceSpotPrices, float64(r.now().Unix()))
	r.log.Debug("spot prices refreshed", zap.Int("types", len(prices)))
	return nil
}

func (r *marketRefresher) failed(source string, err error) {
	r.metrics.CatalogRefreshFailed(source)
	zt, st := r.market.Known()
	kept := "the embedded data"
	if (source == sourceOfferings && zt > 0) || (source == sourceSpotPrices && st > 0) {
		kept = "the last good data"
	}
	r.log.Warn("live catalog refresh failed; planning with "+kept, zap.String("source", source), zap.Error(err))
}

// refreshTimeout bounds one read (the SDK retries inside it).
const refreshTimeout = time.Minute

// refreshAll reads both sources once (at start), each within refreshTimeout.
func (r *marketRefresher) refreshAll(ctx context.Context) {
	for _, f := range []func(context.Context) error{r.refreshOfferings, r.refreshSpotPrices} {
		c, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = f(c)
		cancel()
	}
}

// run reads both sources at once, then each on its period until ctx ends.
func (r *marketRefresher) run(ctx context.Context) {
	r.refreshAll(ctx)
	offers, spot := time.NewTicker(r.offeringsEvery), time.NewTicker(r.spotEvery)
	defer offers.Stop()
	defer spot.Stop()
	for {
		var f func(context.Context) error
		select {
		case <-ctx.Done():
			return
		case <-offers.C:
			f = r.refreshOfferings
		case <-spot.C:
			f = r.refreshSpotPrices
		}
		c, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = f(c)
		cancel()
	}
}
