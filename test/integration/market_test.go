//go:build integration

package integration

import (
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A zone-free spot pod's node goes to the zone where its type's spot price
// is lowest (DescribeSpotPriceHistory, read by the controller), and is
// priced at that zone's price; once the price moves and the controller has
// read it again, the next pod's node goes to the other zone.
func TestSpotZoneFollowsThePrice(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	for _, p := range []struct {
		zone  string
		price float64
	}{{"us-east-1a", 0.0200}, {"us-east-1b", 0.0150}} {
		if err := e.w.EC2.SetSpotPrice("c7a.large", p.zone, p.price); err != nil {
			t.Fatal(err)
		}
	}
	e.runControllerLogged(t, func(c *controller.Config) { c.SpotPriceRefresh, c.MetricsAddr = time.Second, metricsAddr })
	// Until its first read the controller plans with the embedded spot
	// prices, as Karpenter does; under throttling that read can take seconds.
	waitFor(t, time.Minute, "the controller's first spot price read", func() bool {
		return sumOf(scrapeFamilies(t, e.addr(metricsAddr)), "joinery_catalog_refresh_last_success_timestamp_seconds",
			map[string]string{"source": "spot_prices"}) > 0
	})
	e.applyWithDefaultClass(t, "testdata/market.yaml")
	zone, price := e.marketNode(t, "market-first")
	t.Logf("market-first: node in %s at %.4f USD/hour", zone, price)
	if zone != "us-east-1b" || price != 0.0150 {
		t.Errorf("market-first's node in %s at %.4f, want us-east-1b at 0.0150 (1a: 0.0200, 1c does not sell c7a)", zone, price)
	}

	e.w.EC2.SetRecording(true)
	moved := time.Now()
	if err := e.w.EC2.SetSpotPrice("c7a.large", "us-east-1b", 0.0250); err != nil {
		t.Fatal(err)
	}
	// Refreshes run one after the other: the second to start after the
	// move started after the first one, which read the new price, ended.
	waitFor(t, time.Minute, "two spot price refreshes started after the move", func() bool {
		n := 0
		for _, r := range e.w.EC2.Requests() {
			if r.Action == "DescribeSpotPriceHistory" && r.Params.Get("NextToken") == "" && r.Time.After(moved) {
				n++
			}
		}
		return n >= 2
	})
	objs := readManifests(t, "testdata/market-next.yaml")
	e.apply(t, objs)
	zone, price = e.marketNode(t, "market-next")
	t.Logf("market-next: node in %s at %.4f USD/hour", zone, price)
	if zone != "us-east-1a" || price != 0.0200 {
		t.Errorf("market-next's node in %s at %.4f, want us-east-1a at 0.0200 (1b moved to 0.0250)", zone, price)
	}
}

// marketNode waits for the app's pod to be Ready and returns its node's
// zone and the price its NodeClaim workflow recorded for the instance.
func (e *env) marketNode(t *testing.T, app string) (string, float64) {
	t.Helper()
	var node string
	waitFor(t, 3*time.Minute, app+" Ready", func() bool {
		n, byNode := e.readyPods("app=" + app)
		for k := range byNode {
			node = k
		}
		return n == 1
	})
	n, err := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := e.nodeClaimStatus(t, node)
	if st.Instance.Zone != n.Labels[apiv1.LabelZone] {
		t.Errorf("node %s: zone label %s, instance in %s", node, n.Labels[apiv1.LabelZone], st.Instance.Zone)
	}
	return n.Labels[apiv1.LabelZone], st.Instance.Price
}
