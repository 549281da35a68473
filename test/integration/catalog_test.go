//go:build integration

package integration

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/api/workflowservice/v1"
)

// With the EC2 endpoint refusing DescribeInstanceTypes (UnauthorizedOperation,
// as for a role without ec2:DescribeInstanceTypes), the controller still
// provisions, from the embedded instance types, and says so: a warning in
// its log naming the source and the embedded data, the
// joinery_catalog_refresh_errors_total{source="instance_types"} counter,
// and `starter status` (the consolidation workflow's status).
func TestCatalogFallbackWhenInstanceTypesRefused(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.w.EC2.Refuse("DescribeInstanceTypes", ec2.CodeUnauthorizedOperation)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.MetricsAddr = metricsAddr
		c.DisruptionPassInterval = 2 * time.Second
	})
	e.applyWithDefaultClass(t, "testdata/market.yaml")
	zone, price := e.marketNode(t, "market-first")
	t.Logf("market-first: node in %s at %.4f USD/hour from the embedded catalog", zone, price)
	if zone == "" || price <= 0 {
		t.Errorf("market-first's node in %q at %v", zone, price)
	}
	if n := e.w.EC2.Calls()["DescribeInstanceTypes"]; n == 0 {
		t.Error("the controller never asked DescribeInstanceTypes")
	}
	b, err := os.ReadFile(filepath.Join(e.dir, "joinery.log"))
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "live catalog refresh failed; planning with the embedded data") &&
			strings.Contains(l, `"source":"instance_types"`) && strings.Contains(l, "UnauthorizedOperation") {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning naming instance_types, the embedded data and UnauthorizedOperation in the controller log")
	}
	if got := scrapeAt(t, e.addr(metricsAddr), `joinery_catalog_refresh_errors_total{source="instance_types"}`); got < 1 {
		t.Errorf("joinery_catalog_refresh_errors_total{source=instance_types} = %v, want >= 1", got)
	}
	if got := scrapeAt(t, e.addr(metricsAddr), `joinery_catalog_refresh_errors_total{source="on_demand_prices"}`); got > 0 {
		t.Errorf("joinery_catalog_refresh_errors_total{source=on_demand_prices} = %v, want none (the local Pricing endpoint answers)", got)
	}
	var st workflows.ConsolidationStatus
	waitFor(t, time.Minute, "starter status naming the catalog's fallback", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil && st.Catalog != ""
	})
	t.Logf("starter status: catalog: %s", st.Catalog)
	if !strings.Contains(st.Catalog, "instance_types: embedded data (UnauthorizedOperation") ||
		!strings.Contains(st.Catalog, "on_demand_prices: live") || !strings.Contains(st.Catalog, "offerings: live") {
		t.Errorf("status catalog %q, want instance_types on the embedded data (UnauthorizedOperation), prices and offerings live", st.Catalog)
	}
}

// The local world runs as eu-west-1 (its zones eu-west-1a/b/c, every price
// the embedded us-east-1 price x1.1: on-demand from the local Pricing
// endpoint, spot from the local EC2), and the examples, applied unchanged,
// provision there: every node in an eu-west-1 zone and region, every
// NodeClaim priced at the region's price, read by the controller from the
// Pricing API and DescribeSpotPriceHistory.
func TestSecondRegionProvisionsTheExamples(t *testing.T) {
	parallel(t)
	const region = "eu-west-1"
	e := startEnvOpts(t, true, func(o *world.Options) { o.Region = region })
	if got := e.w.EC2.Options().Zones; strings.Join(got, ",") != "eu-west-1a,eu-west-1b,eu-west-1c" {
		t.Fatalf("zones %v", got)
	}
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml")
	e.apply(t, objs)
	want, nss := world.ExpectedPods(objs)
	settled, err := world.WaitSettled(e.ctx, e.kc, want, nss)
	if err != nil {
		t.Fatal(err)
	}
	settled.Reprice(e.w.Price)
	settled.Print(os.Stderr)
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	emb := catalog.MustDefault()
	checked := 0
	for _, n := range nodes.Items {
		zone, typ, ct := n.Labels[apiv1.LabelZone], n.Labels[apiv1.LabelInstanceType], n.Labels[apiv1.LabelCapacityType]
		if !strings.HasPrefix(zone, region) || n.Labels[apiv1.LabelRegion] != region {
			t.Errorf("node %s in zone %q region %q, want %s", n.Name, zone, n.Labels[apiv1.LabelRegion], region)
		}
		price := e.nodeClaimStatus(t, n.Name).Instance.Price
		it, _ := emb.Get(typ)
		var wantPrice float64
		if ct == apiv1.CapacityTypeSpot {
			wantPrice, _ = e.w.EC2.SpotPrice(typ, zone)
		} else {
			wantPrice = math.Round(it.OnDemandPrice*world.DefaultPriceFactor*10000) / 10000
		}
		t.Logf("%s: %s %s in %s at %.4f USD/hour (us-east-1 on-demand %.4f)", n.Name, typ, ct, zone, price, it.OnDemandPrice)
		if math.Abs(price-wantPrice) > 1e-9 {
			t.Errorf("node %s (%s %s in %s) priced %.4f, want the region's %.4f", n.Name, typ, ct, zone, price, wantPrice)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no nodes")
	}
}

// nodeClaimStatus is the status of the node's NodeClaim workflow, once it
// has recorded the instance (its price, zone...).
func (e *env) nodeClaimStatus(t *testing.T, node string) workflows.NodeClaimStatus {
	t.Helper()
	var st workflows.NodeClaimStatus
	q := fmt.Sprintf("NodeName = %q", node)
	waitFor(t, 30*time.Second, "the NodeClaim workflow of "+node, func() bool {
		found, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err != nil || len(found.Executions) != 1 {
			return false
		}
		v, err := e.tc.QueryWorkflow(e.ctx, found.Executions[0].Execution.WorkflowId, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil && st.Instance.ID != ""
	})
	return st
}
