package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simpricing "github.com/joinery/joinery/sim/pricing"
)

// `starter catalog export` against a local EC2 and Pricing endpoint running
// as eu-west-1 (prices x1.1, zones eu-west-1a/b/c, eu-west-1c without c7a)
// writes a CSV that `starter plan --catalog` plans with: every new node in
// an eu-west-1 zone at the region's price, on-demand x1.1 and spot the
// endpoint's zonal price, and never c7a in eu-west-1c.
func TestCatalogExportThenPlan(t *testing.T) {
	const region = "eu-west-1"
	ec2srv := simec2.New(simec2.Options{Region: region, PriceFactor: 1.1})
	ec2URL, stop, err := ec2srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	psrv := simpricing.New(simpricing.Options{Region: region, PriceFactor: 1.1})
	pricingURL, stopP, err := psrv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stopP()

	out := filepath.Join(t.TempDir(), "catalog.csv")
	cmd := newCatalogExportCommand()
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"-o", out, "--ec2-endpoint", ec2URL, "--pricing-endpoint", pricingURL, "--region", region})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	t.Logf("export: %s", strings.TrimSpace(stderr.String()))
	if strings.Contains(stderr.String(), "note:") {
		t.Errorf("export notes a fallback: %s", stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	emb := catalog.MustDefault()
	if len(cat.Types) != len(emb.Types) {
		t.Errorf("%d types exported, want %d", len(cat.Types), len(emb.Types))
	}
	if z := strings.Join(cat.Zones(), ","); z != "eu-west-1a,eu-west-1b,eu-west-1c" {
		t.Errorf("zones %s", z)
	}
	m5, _ := cat.Get("m5.large")
	if m5.OnDemandPrice != 0.1056 {
		t.Errorf("m5.large on-demand %v, want 0.1056 (0.096 x 1.1)", m5.OnDemandPrice)
	}

	docs, errs := planner.ReadFiles("../examples/nodepools.yaml", "../examples/workloads.yaml")
	built, berrs := planner.Build(docs, planner.Options{Catalog: cat})
	if errs = append(errs, berrs...); len(errs) > 0 {
		t.Fatal(errs)
	}
	built.Input.Budget = -1
	res := planner.Solve(built.Input)
	if len(res.Plan.NewNodeClaims) == 0 || len(res.Plan.Unschedulable) > 0 {
		t.Fatalf("%d new nodes, unschedulable %v", len(res.Plan.NewNodeClaims), res.Plan.Unschedulable)
	}
	var table bytes.Buffer
	writePlanTable(&table, built.Input, res)
	t.Logf("plan with the exported eu-west-1 catalog:\n%s", table.String())
	for i := range res.Plan.NewNodeClaims {
		j := claimJSON(&res.Plan.NewNodeClaims[i])
		if !strings.HasPrefix(j.Zone, region) {
			t.Errorf("node %s/%s in zone %q, want %s", j.NodePool, j.InstanceType, j.Zone, region)
		}
		if j.InstanceType == "c7a.large" && j.Zone == "eu-west-1c" {
			t.Errorf("c7a.large planned in eu-west-1c, which does not sell it")
		}
		it, _ := emb.Get(j.InstanceType)
		want := simpricing.Price(it, 1.1)
		if j.CapacityType == apiv1.CapacityTypeSpot {
			want, _ = ec2srv.SpotPrice(j.InstanceType, j.Zone)
		}
		if j.PriceUSDHour != want {
			t.Errorf("node %s %s in %s priced %v, want the region's %v", j.InstanceType, j.CapacityType, j.Zone, j.PriceUSDHour, want)
		}
	}
}

// A failed GetProducts keeps the embedded on-demand prices and says so.
func TestCatalogExportPricingFallback(t *testing.T) {
	ec2srv := simec2.New(simec2.Options{})
	ec2URL, stop, err := ec2srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	psrv := simpricing.New(simpricing.Options{})
	psrv.Refuse("AccessDeniedException")
	pricingURL, stopP, err := psrv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stopP()
	cat, notes, err := exportCatalog(context.Background(), aws.Options{Region: "us-east-1", Endpoint: ec2URL, PricingEndpoint: pricingURL, ClusterName: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "embedded") || !strings.Contains(notes[0], "AccessDeniedException") {
		t.Errorf("notes %q", notes)
	}
	if m5, _ := cat.Get("m5.large"); m5.OnDemandPrice != 0.096 {
		t.Errorf("m5.large %v, want the embedded 0.096", m5.OnDemandPrice)
	}
}
