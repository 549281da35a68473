package cloud_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/cloud"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// Every type of the embedded catalog, served by the local EC2 endpoint in
// DescribeInstanceTypes' shape (pages of 100) and read back through the
// real SDK, comes back with every fact equal: the facts (max pods by the
// ENI formula, GPU and accelerator names, bandwidth, EBS limits) are
// derived from the API answer, not copied by name. Prices and the spot
// saving come from the embedded catalog (the API has none).
func TestInstanceTypesRoundTrip(t *testing.T) {
	srv, c := world(t, simec2.Options{}, cloud.Options{})
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
	srv, c := world(t, simec2.Options{}, cloud.Options{})
	srv.Refuse("DescribeInstanceTypes", simec2.CodeUnauthorizedOperation)
	_, err := c.InstanceTypes(context.Background(), catalog.MustDefault())
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnauthorizedOperation" {
		t.Fatalf("err = %v, want UnauthorizedOperation", err)
	}
}
