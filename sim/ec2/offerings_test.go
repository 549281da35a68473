package ec2_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/ec2"
)

// spotHistory reads every page of a DescribeSpotPriceHistory request with
// the SDK's paginator, in the order the endpoint answered.
func spotHistory(t *testing.T, c *sdkec2.Client, in *sdkec2.DescribeSpotPriceHistoryInput) ([]types.SpotPrice, int) {
	t.Helper()
	var out []types.SpotPrice
	pages := 0
	p := sdkec2.NewDescribeSpotPriceHistoryPaginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		out = append(out, page.SpotPriceHistory...)
	}
	return out, pages
}

// The newest point per (type, zone): one per offered pair, the zone's price
// within 10% of the catalog's, zones differing, a type missing from a zone
// absent; every page together holds every offered pair once.
func TestDescribeSpotPriceHistoryNewestPerTypeAndZone(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	cat := catalog.MustDefault()
	now := time.Now()
	got, _ := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{
		StartTime: &now, ProductDescriptions: []string{"Linux/UNIX"},
		Filters: []types.Filter{{Name: aws.String("instance-type"), Values: []string{"m5.large", "m6i.large", "c7a.large"}}},
	})
	byPair := map[[2]string]float64{}
	for _, p := range got {
		k := [2]string{string(p.InstanceType), aws.ToString(p.AvailabilityZone)}
		if _, dup := byPair[k]; dup {
			t.Fatalf("two points for %v in %+v", k, got)
		}
		price, err := strconv.ParseFloat(aws.ToString(p.SpotPrice), 64)
		if err != nil || p.ProductDescription != types.RIProductDescriptionLinuxUnix || p.Timestamp == nil || p.Timestamp.After(now) {
			t.Fatalf("point %+v (%v)", p, err)
		}
		byPair[k] = price
	}
	if len(byPair) != 8 {
		t.Fatalf("%d points %v, want 3 zones of m5.large and m6i.large, c7a.large in 1a and 1b", len(byPair), byPair)
	}
	if _, ok := byPair[[2]string{"c7a.large", "us-east-1c"}]; ok {
		t.Errorf("c7a.large has a price in us-east-1c, which does not sell it")
	}
	for k, price := range byPair {
		it, _ := cat.Get(k[0])
		if cur, _ := srv.SpotPrice(k[0], k[1]); cur != price || math.Abs(price/it.SpotPrice()-1) > 0.1001 {
			t.Errorf("%v: price %v, server %v, catalog %v", k, price, cur, it.SpotPrice())
		}
	}
	if a, b := byPair[[2]string{"m5.large", "us-east-1a"}], byPair[[2]string{"m5.large", "us-east-1b"}]; a == b {
		t.Errorf("m5.large costs %v in both us-east-1a and 1b", a)
	}

	// All of them, over pages of 1000: every offered (type, zone) once.
	all, pages := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{StartTime: &now, MaxResults: aws.Int32(1000)})
	want := 0
	for _, it := range cat.Types {
		for _, z := range catalog.DefaultZones {
			if srv.Offered(it.Name, z) {
				want++
			}
		}
	}
	seen := map[[2]string]bool{}
	for _, p := range all {
		seen[[2]string{string(p.InstanceType), aws.ToString(p.AvailabilityZone)}] = true
	}
	if len(all) != want || len(seen) != want || pages != (want+999)/1000 {
		t.Errorf("%d points (%d distinct) in %d pages, want %d offered pairs", len(all), len(seen), pages, want)
	}

	// Other products have no prices; a zone narrows.
	if w, _ := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{ProductDescriptions: []string{"Windows"}}); len(w) != 0 {
		t.Errorf("Windows prices %+v", w)
	}
	if z, _ := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{StartTime: &now, AvailabilityZone: aws.String("us-east-1b"),
		InstanceTypes: []types.InstanceType{"m5.large"}}); len(z) != 1 || aws.ToString(z[0].AvailabilityZone) != "us-east-1b" {
		t.Errorf("us-east-1b m5.large: %+v", z)
	}
	_, err := c.DescribeSpotPriceHistory(context.Background(), &sdkec2.DescribeSpotPriceHistoryInput{MaxResults: aws.Int32(1001)})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("MaxResults 1001: %v", err)
	}
	_, err = c.DescribeSpotPriceHistory(context.Background(), &sdkec2.DescribeSpotPriceHistoryInput{
		Filters: []types.Filter{{Name: aws.String("no-such-filter"), Values: []string{"x"}}}})
	if apiCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v", err)
	}
}

// SetSpotPrice moves a price: the newest point is the new one, the history
// since the start shows both, newest first, and spot CreateFleet follows it.
func TestSetSpotPriceMovesHistoryAndLaunches(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	sub := subnetsByZone(t, c)
	before, _ := srv.SpotPrice("m5.large", "us-east-1b")
	// Make 1b the cheapest zone for spot m5.large.
	if err := srv.SetSpotPrice("m5.large", "us-east-1b", 0.0123); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	got, _ := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{StartTime: &now, InstanceTypes: []types.InstanceType{"m5.large"},
		AvailabilityZone: aws.String("us-east-1b")})
	if len(got) != 1 || aws.ToString(got[0].SpotPrice) != "0.012300" {
		t.Fatalf("newest point %+v", got)
	}
	hist, _ := spotHistory(t, c, &sdkec2.DescribeSpotPriceHistoryInput{InstanceTypes: []types.InstanceType{"m5.large"},
		AvailabilityZone: aws.String("us-east-1b")})
	if len(hist) != 2 || aws.ToString(hist[0].SpotPrice) != "0.012300" || aws.ToString(hist[1].SpotPrice) != strconv.FormatFloat(before, 'f', 6, 64) ||
		!hist[0].Timestamp.After(*hist[1].Timestamp) {
		t.Fatalf("history %+v, want 0.012300 then %v", hist, before)
	}
	var ov [][2]string
	for _, z := range catalog.DefaultZones {
		ov = append(ov, [2]string{"m5.large", sub[z]})
	}
	out, err := c.CreateFleet(context.Background(), fleet("spot", 1, ov, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1b"] {
		t.Fatalf("spot launched %+v, want us-east-1b", out.Instances)
	}
	in, _ := srv.Instance(out.Instances[0].InstanceIds[0])
	if in.Price != 0.0123 {
		t.Errorf("instance pays %v, want the moved price 0.0123", in.Price)
	}
	if err := srv.SetSpotPrice("c7a.large", "us-east-1c", 0.05); err == nil {
		t.Errorf("SetSpotPrice of a pair the zone does not sell succeeded")
	}
	if err := srv.SetSpotPrice("m5.large", "us-east-1a", -1); err == nil {
		t.Errorf("SetSpotPrice with a negative price succeeded")
	}
}

// CreateFleet refuses a type the zone does not sell (Unsupported) and
// launches from the next override (the same type in another zone); DescribeInstanceTypeOfferings agrees.
func TestTypeNotOfferedInZone(t *testing.T) {
	srv, c := start(t, ec2.Options{})
	sub := subnetsByZone(t, c)
	if srv.Offered("c7a.large", "us-east-1c") || !srv.Offered("c7a.large", "us-east-1a") || !srv.Offered("m6i.large", "us-east-1c") {
		t.Fatalf("offered: c7a.large 1c %v, 1a %v; m6i.large 1c %v", srv.Offered("c7a.large", "us-east-1c"),
			srv.Offered("c7a.large", "us-east-1a"), srv.Offered("m6i.large", "us-east-1c"))
	}
	out, err := c.CreateFleet(context.Background(), fleet("on-demand", 1, [][2]string{{"c7a.large", sub["us-east-1c"]}, {"c7a.large", sub["us-east-1a"]}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != sub["us-east-1a"] {
		t.Fatalf("instances %+v", out.Instances)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "Unsupported" ||
		aws.ToString(out.Errors[0].ErrorMessage) != "Your requested instance type (c7a.large) is not supported in your requested Availability Zone (us-east-1c). "+
			"Please retry your request by not specifying an Availability Zone or choosing us-east-1a, us-east-1b." {
		t.Fatalf("errors %+v", out.Errors)
	}
	offs, err := c.DescribeInstanceTypeOfferings(context.Background(), &sdkec2.DescribeInstanceTypeOfferingsInput{
		LocationType: types.LocationTypeAvailabilityZone,
		Filters:      []types.Filter{{Name: aws.String("instance-type"), Values: []string{"c7a.large"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, o := range offs.InstanceTypeOfferings {
		zones = append(zones, aws.ToString(o.Location))
	}
	if len(zones) != 2 || zones[0] != "us-east-1a" || zones[1] != "us-east-1b" {
		t.Errorf("c7a.large offered in %v", zones)
	}

	// An empty NotOffered sells every type everywhere.
	all, _ := start(t, ec2.Options{NotOffered: map[string][]string{}})
	if !all.Offered("c7a.large", "us-east-1c") {
		t.Errorf("NotOffered {} still leaves c7a.large out of us-east-1c")
	}
}
