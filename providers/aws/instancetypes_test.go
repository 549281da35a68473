package aws_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simpricing "github.com/joinery/joinery/sim/pricing"
)

// Every type of the embedded catalog, served by the local EC2 endpoint in
// DescribeInstanceTypes' shape (pages of 100) and read back through the
// real SDK, comes back with every fact equal: the facts (max pods by the
// ENI formula, GPU and accelerator names, bandwidth, EBS limits) are
// derived from the API answer, not copied by name. Prices and the spot
// saving come from the embedded catalog (the API has none).
func TestInstanceTypesRoundTrip(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	srv.SetRecording(true)
	emb := catalog.MustDefault()
	got, err := c.InstanceTypes(context.Background(), emb)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(emb.Types) {
		t.Fatalf("%d types, want the embedded %d", len(got), len(emb.Types))
	}
	pages := 0
	for _, r := range srv.Requests() {
		if r.Action == "DescribeInstanceTypes" {
			pages++
		}
	}
	if want := (len(emb.Types) + 99) / 100; pages != want {
		t.Errorf("%d DescribeInstanceTypes pages, want %d (100 a page)", pages, want)
	}
	// Facts derived without the embedded catalog must equal it too.
	bare, err := c.InstanceTypes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range got {
		want, ok := emb.Get(it.Name)
		if !ok {
			t.Errorf("%s: not in the embedded catalog", it.Name)
			continue
		}
		if !reflect.DeepEqual(it, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", it.Name, *it, *want)
		}
		b := *bare[i]
		b.OnDemandPrice, b.SpotSavingsPct = want.OnDemandPrice, want.SpotSavingsPct
		if want.NetworkBandwidthMbps != 0 && b.NetworkBandwidthMbps != want.NetworkBandwidthMbps {
			t.Errorf("%s: bandwidth from the API %d, want %d", it.Name, b.NetworkBandwidthMbps, want.NetworkBandwidthMbps)
		}
		if b.NestedVirtualization != want.NestedVirtualization {
			t.Errorf("%s: nested virtualization from the API %v, want %v", it.Name, b.NestedVirtualization, want.NestedVirtualization)
		}
		if b.NitroEnclaves != want.NitroEnclaves {
			t.Errorf("%s: Nitro Enclaves from the API %v, want %v", it.Name, b.NitroEnclaves, want.NitroEnclaves)
		}
		if b.MaxPods != want.MaxPods && want.DefaultCardMaxENIs > 0 {
			t.Errorf("%s: max pods from the API %d, want %d", it.Name, b.MaxPods, want.MaxPods)
		}
	}
	g5, _ := emb.Get("g5.xlarge")
	if g5.GPUName != "a10g" || g5.GPUManufacturer != "nvidia" || g5.GPUCount != 1 {
		t.Errorf("g5.xlarge GPU %+v", g5)
	}
}

// A refused DescribeInstanceTypes is an error carrying EC2's code.
func TestInstanceTypesRefused(t *testing.T) {
	srv, c := world(t, simec2.Options{}, aws.Options{})
	srv.Refuse("DescribeInstanceTypes", simec2.CodeUnauthorizedOperation)
	_, err := c.InstanceTypes(context.Background(), catalog.MustDefault())
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnauthorizedOperation" {
		t.Fatalf("err = %v, want UnauthorizedOperation", err)
	}
}

// pricingClient is a cloud.Client whose Pricing endpoint is the local one.
func pricingClient(t *testing.T, region string, srv *simpricing.Server) *aws.Client {
	t.Helper()
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	_, ec2URL := endpoint(t, simec2.Options{Region: region})
	c, err := aws.New(context.Background(), aws.Options{Region: region, Endpoint: ec2URL, PricingEndpoint: url, ClusterName: cluster, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// OnDemandPrices reads every page of GetProducts with Karpenter's filters:
// every embedded type comes back at its embedded price (the capacity
// reservation rows the filters leave out would repeat it), bare metal
// types from their Dedicated query; another region's endpoint (prices x1.1)
// answers that region's prices.
func TestOnDemandPrices(t *testing.T) {
	srv := simpricing.New(simpricing.Options{})
	srv.SetRecording(true)
	c := pricingClient(t, "us-east-1", srv)
	prices, err := c.OnDemandPrices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	emb := catalog.MustDefault()
	if len(prices) != len(emb.Types) {
		t.Errorf("%d prices, want the embedded %d types", len(prices), len(emb.Types))
	}
	for _, it := range emb.Types {
		if prices[it.Name] != it.OnDemandPrice {
			t.Errorf("%s: %v, want %v", it.Name, prices[it.Name], it.OnDemandPrice)
		}
	}
	metal := 0
	for _, it := range emb.Types {
		if it.BareMetal {
			metal++
		}
	}
	// Two queries, 100 documents a page.
	if got, want := len(srv.Requests()), (len(emb.Types)-metal+99)/100+(metal+99)/100; got != want {
		t.Errorf("%d GetProducts requests, want %d", got, want)
	}
	if m5 := prices["m5.large"]; m5 != 0.096 {
		t.Errorf("m5.large = %v, want 0.096", m5)
	}

	eu := pricingClient(t, "eu-west-1", simpricing.New(simpricing.Options{Region: "eu-west-1", PriceFactor: 1.1}))
	euPrices, err := eu.OnDemandPrices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := euPrices["m5.large"]; got != 0.1056 {
		t.Errorf("eu-west-1 m5.large = %v, want 0.1056 (0.096 x 1.1)", got)
	}
	// The us-east-1 endpoint has no eu-west-1 products.
	wrong := pricingClient(t, "eu-west-1", simpricing.New(simpricing.Options{}))
	if p, err := wrong.OnDemandPrices(context.Background()); err != nil || len(p) != 0 {
		t.Errorf("eu-west-1 prices from a us-east-1 price list: %d, %v; want none", len(p), err)
	}
}

func TestPricingRegion(t *testing.T) {
	for region, want := range map[string]string{"us-east-1": "us-east-1", "us-west-2": "us-east-1", "eu-west-1": "eu-central-1",
		"ap-northeast-1": "ap-south-1", "cn-north-1": "cn-northwest-1", "sa-east-1": "us-east-1"} {
		if got := aws.PricingRegion(region); got != want {
			t.Errorf("PricingRegion(%s) = %s, want %s", region, got, want)
		}
	}
}

// A refused GetProducts is an error carrying the API's error type.
func TestOnDemandPricesRefused(t *testing.T) {
	srv := simpricing.New(simpricing.Options{})
	srv.Refuse("AccessDeniedException")
	c := pricingClient(t, "us-east-1", srv)
	_, err := c.OnDemandPrices(context.Background())
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" {
		t.Fatalf("err = %v, want AccessDeniedException", err)
	}
}

// One full read of the instance types (every page) from the local EC2.
func BenchmarkInstanceTypes(b *testing.B) {
	srv := simec2.New(simec2.Options{})
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	c, err := aws.New(context.Background(), aws.Options{Endpoint: url, ClusterName: cluster})
	if err != nil {
		b.Fatal(err)
	}
	emb := catalog.MustDefault()
	for b.Loop() {
		if _, err := c.InstanceTypes(context.Background(), emb); err != nil {
			b.Fatal(err)
		}
	}
}

// One full read of the on-demand prices (both queries, every page) from
// the local Pricing endpoint.
func BenchmarkOnDemandPrices(b *testing.B) {
	srv := simpricing.New(simpricing.Options{})
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	c, err := aws.New(context.Background(), aws.Options{Endpoint: "http://127.0.0.1:1", PricingEndpoint: url, ClusterName: cluster})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.OnDemandPrices(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
