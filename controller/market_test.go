package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// fakeMarketSource answers with types/zones/prices, or err.
type fakeMarketSource struct {
	types    []*catalog.InstanceType
	zones    map[string][]string
	prices   map[string]map[string]float64
	onDemand map[string]float64
	err      error
}

func (f *fakeMarketSource) InstanceTypes(context.Context, *catalog.Catalog) ([]*catalog.InstanceType, error) {
	var out []*catalog.InstanceType
	for _, it := range f.types {
		c := *it
		out = append(out, &c)
	}
	return out, f.err
}

func (f *fakeMarketSource) OnDemandPrices(context.Context) (map[string]float64, error) {
	return f.onDemand, f.err
}

func (f *fakeMarketSource) InstanceTypeZones(context.Context) (map[string][]string, error) {
	return f.zones, f.err
}

func (f *fakeMarketSource) SpotPrices(context.Context, time.Time) (map[string]map[string]float64, error) {
	return f.prices, f.err
}

func spotOf(t *testing.T, m *catalog.Market, typ, zone string) float64 {
	t.Helper()
	it, ok := catalog.MustDefault().Get(typ)
	if !ok {
		t.Fatalf("no %s", typ)
	}
	return m.Price(it, zone, apiv1.CapacityTypeSpot)
}

func zonesOfType(t *testing.T, m *catalog.Market, typ string) []string {
	t.Helper()
	it, _ := catalog.MustDefault().Get(typ)
	var out []string
	for _, o := range m.Offerings(it, catalog.DefaultZones) {
		if o.CapacityType == apiv1.CapacityTypeOnDemand {
			out = append(out, o.Zone)
		}
	}
	return out
}

// A failed refresh keeps what the market had (the embedded data before any
// success, else the last good answer), logs a warning and counts
// joinery_catalog_refresh_errors_total{source}; an empty answer counts as
// a failure; a success sets the last-success gauge.
func TestMarketRefreshFailureKeepsData(t *testing.T) {
	src := &fakeMarketSource{err: errors.New("UnauthorizedOperation")}
	m := metrics.New()
	core, logs := observer.New(zap.WarnLevel)
	market := catalog.NewMarket()
	r := newMarketRefresher(market, catalog.MustDefault(), src, Config{}.WithDefaults(), m, zap.New(core))
	r.now = func() time.Time { return time.Unix(1_800_000_000, 0) }
	errs := func(source string) float64 { return testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(source)) }

	r.refreshAll(context.Background())
	for _, s := range []string{sourceInstanceTypes, sourceOfferings, sourceSpotPrices, sourceOnDemandPrices} {
		if errs(s) != 1 {
			t.Errorf("%s errors = %v, want 1", s, errs(s))
		}
	}
	// The embedded data: c6a.large in every zone, spot 0.0765 x (1-0.62) = 0.02907.
	if z := zonesOfType(t, market, "c6a.large"); len(z) != 3 {
		t.Errorf("after a failed first refresh c6a.large is in %v, want all 3 zones", z)
	}
	if p := spotOf(t, market, "c6a.large", "us-east-1b"); p != 0.02907 {
		t.Errorf("spot price after a failed first refresh = %v, want the embedded 0.02907", p)
	}
	if n := logs.FilterMessage("live catalog refresh failed; planning with the embedded data").Len(); n != 4 {
		t.Errorf("%d warnings naming the embedded data, want 4: %v", n, logs.All())
	}
	if got := r.Status()[0]; got.Source != sourceInstanceTypes || got.Using != "embedded data" || got.LastError != "UnauthorizedOperation" {
		t.Errorf("instance types status %+v, want the embedded data after UnauthorizedOperation", got)
	}

	src.err = nil
	c6a, _ := catalog.MustDefault().Get("c6a.large")
	src.types = []*catalog.InstanceType{c6a}
	src.onDemand = map[string]float64{"c6a.large": 0.08}
	src.zones = map[string][]string{"c6a.large": {"us-east-1b", "us-east-1c"}}
	src.prices = map[string]map[string]float64{"c6a.large": {"us-east-1b": 0.025}}
	r.refreshAll(context.Background())
	if z := zonesOfType(t, market, "c6a.large"); len(z) != 2 || z[0] != "us-east-1b" {
		t.Errorf("c6a.large zones = %v, want [us-east-1b us-east-1c]", z)
	}
	if p := spotOf(t, market, "c6a.large", "us-east-1b"); p != 0.025 {
		t.Errorf("spot price = %v, want 0.025", p)
	}
	if c := market.Types(nil); c == nil || len(c.Types) != 1 {
		t.Errorf("live types %v, want c6a.large only", c)
	}
	if p := market.Price(c6a, "us-east-1a", apiv1.CapacityTypeOnDemand); p != 0.08 {
		t.Errorf("on-demand price %v, want the Pricing API's 0.08", p)
	}
	for _, st := range r.Status() {
		if st.Using != "live" || st.LastError != "" {
			t.Errorf("status %+v, want live", st)
		}
	}
	for _, s := range []string{sourceInstanceTypes, sourceOfferings, sourceSpotPrices, sourceOnDemandPrices} {
		if got := testutil.ToFloat64(m.CatalogRefreshLastSuccess.WithLabelValues(s)); got != 1_800_000_000 {
			t.Errorf("last success of %s = %v, want 1800000000", s, got)
		}
	}

	// A failure, then an empty answer: the last good data stays.
	src.err = errors.New("RequestLimitExceeded")
	r.refreshAll(context.Background())
	src.err, src.zones, src.prices, src.types, src.onDemand = nil, map[string][]string{}, nil, nil, nil
	r.refreshAll(context.Background())
	for _, s := range []string{sourceInstanceTypes, sourceOfferings, sourceSpotPrices, sourceOnDemandPrices} {
		if errs(s) != 3 {
			t.Errorf("%s errors = %v, want 3", s, errs(s))
		}
	}
	if c := market.Types(nil); c == nil || len(c.Types) != 1 || market.Price(c6a, "us-east-1a", apiv1.CapacityTypeOnDemand) != 0.08 {
		t.Errorf("after failed refreshes the live types/prices are gone, want the last good ones")
	}
	if z := zonesOfType(t, market, "c6a.large"); len(z) != 2 {
		t.Errorf("after failed refreshes c6a.large zones = %v, want the last good [us-east-1b us-east-1c]", z)
	}
	if p := spotOf(t, market, "c6a.large", "us-east-1b"); p != 0.025 {
		t.Errorf("after failed refreshes spot price = %v, want the last good 0.025", p)
	}
	if n := logs.FilterMessage("live catalog refresh failed; planning with the last good data").Len(); n != 8 {
		t.Errorf("%d warnings naming the last good data, want 8", n)
	}
}

// Against the local EC2 endpoint through the real SDK: the market learns
// that us-east-1a does not sell c6in (DefaultNotOffered) and the zones'
// spot prices, follows SetSpotPrice on the next refresh, and keeps them
// when the endpoint goes away.
func TestMarketRefreshFromEndpoint(t *testing.T) {
	srv := simec2.New(simec2.Options{ClusterTag: "joinery"})
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cc, err := aws.New(context.Background(), aws.Options{Endpoint: url, ClusterName: "joinery", MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	market := catalog.NewMarket()
	r := newMarketRefresher(market, catalog.MustDefault(), cc, Config{}.WithDefaults(), m, zap.NewNop())
	r.refreshAll(context.Background())
	if got := testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(sourceOfferings)) + testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(sourceSpotPrices)) +
		testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(sourceInstanceTypes)); got != 0 {
		t.Fatalf("%v refresh errors against the endpoint", got)
	}
	// No Pricing endpoint with a local EC2: the embedded prices, never AWS.
	if got := testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(sourceOnDemandPrices)); got != 1 {
		t.Errorf("on-demand price errors = %v, want 1 (no Pricing endpoint)", got)
	}
	if n := market.KnownTypes(); n != len(catalog.MustDefault().Types) {
		t.Errorf("%d live types, want the endpoint's %d", n, len(catalog.MustDefault().Types))
	}
	if z := zonesOfType(t, market, "c6in.large"); len(z) != 2 || z[0] != "us-east-1b" || z[1] != "us-east-1c" {
		t.Errorf("c6in.large zones = %v, want [us-east-1b us-east-1c]", z)
	}
	if z := zonesOfType(t, market, "c7a.large"); len(z) != 2 || z[0] != "us-east-1a" || z[1] != "us-east-1b" {
		t.Errorf("c7a.large zones = %v, want [us-east-1a us-east-1b]", z)
	}
	for _, zone := range catalog.DefaultZones {
		want, _ := srv.SpotPrice("c6a.large", zone)
		if got := spotOf(t, market, "c6a.large", zone); got != want {
			t.Errorf("c6a.large spot in %s = %v, want the endpoint's %v", zone, got, want)
		}
	}
	if err := srv.SetSpotPrice("c6a.large", "us-east-1b", 0.0123); err != nil {
		t.Fatal(err)
	}
	if err := r.refreshSpotPrices(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := spotOf(t, market, "c6a.large", "us-east-1b"); got != 0.0123 {
		t.Errorf("c6a.large spot in 1b after SetSpotPrice = %v, want 0.0123", got)
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.refreshSpotPrices(ctx); err == nil {
		t.Fatal("refresh against a stopped endpoint succeeded")
	}
	if got := testutil.ToFloat64(m.CatalogRefreshErrors.WithLabelValues(sourceSpotPrices)); got != 1 {
		t.Errorf("spot refresh errors = %v, want 1", got)
	}
	if got := spotOf(t, market, "c6a.large", "us-east-1b"); got != 0.0123 {
		t.Errorf("spot in 1b after a failed refresh = %v, want the last good 0.0123", got)
	}
}

// A type the answer describes but nothing prices (no Pricing API price, not
// in the embedded catalog) is left out; the Pricing API's price makes it
// plannable at the next read. A changed EC2NodeClass asks for a new read
// without blocking.
func TestMarketTypesNeedAPrice(t *testing.T) {
	c6a, _ := catalog.MustDefault().Get("c6a.large")
	newType := *c6a
	newType.Name, newType.OnDemandPrice = "c99a.large", 0
	src := &fakeMarketSource{types: []*catalog.InstanceType{c6a, &newType}}
	market := catalog.NewMarket()
	r := newMarketRefresher(market, catalog.MustDefault(), src, Config{}.WithDefaults(), metrics.New(), zap.NewNop())
	if err := r.refreshTypes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := market.Types(nil).Get("c99a.large"); ok || market.KnownTypes() != 1 {
		t.Errorf("an unpriced type was kept (%d types)", market.KnownTypes())
	}
	src.onDemand = map[string]float64{"c99a.large": 0.07}
	if err := r.refreshOnDemandPrices(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.refreshTypes(context.Background()); err != nil {
		t.Fatal(err)
	}
	it, ok := market.Types(nil).Get("c99a.large")
	if !ok || market.Price(it, "us-east-1a", apiv1.CapacityTypeOnDemand) != 0.07 {
		t.Errorf("c99a.large = %v, %v; want it at the Pricing API's 0.07", it, ok)
	}
	r.NodeClassChanged()
	r.NodeClassChanged() // a second poke before the read does not block
	select {
	case <-r.changed:
	default:
		t.Error("NodeClassChanged did not ask for a read")
	}
}
