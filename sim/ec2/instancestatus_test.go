package ec2_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/joinery/joinery/sim/ec2"
)

func TestDescribeInstanceStatus(t *testing.T) {
	srv, c := start(t, ec2.Options{BootDelay: -1})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	out, err := c.CreateFleet(ctx, fleet("on-demand", 7, [][2]string{{"m5.large", sub["us-east-1a"]}}, map[string]string{"joinery.sh/cluster": "c1"}))
	if err != nil {
		t.Fatal(err)
	}
	ids := out.Instances[0].InstanceIds
	since := time.Now().Add(-3 * time.Minute).UTC().Truncate(time.Millisecond)
	if err := srv.Impair(ids[1], since); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[6:]}); err != nil {
		t.Fatal(err)
	}
	list := func(in *sdkec2.DescribeInstanceStatusInput) (got []types.InstanceStatus, pages int) {
		p := sdkec2.NewDescribeInstanceStatusPaginator(c, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			got = append(got, page.InstanceStatuses...)
		}
		return got, pages
	}
	idsOf := func(st []types.InstanceStatus) []string {
		var out []string
		for _, s := range st {
			out = append(out, aws.ToString(s.InstanceId))
		}
		return out
	}
	// Running instances only, by default; pages of MaxResults.
	all, pages := list(&sdkec2.DescribeInstanceStatusInput{MaxResults: aws.Int32(5)})
	if !slices.Equal(idsOf(all), ids[:6]) || pages != 2 {
		t.Errorf("statuses %v in %d pages, want the 6 running in 2", idsOf(all), pages)
	}
	withAll, _ := list(&sdkec2.DescribeInstanceStatusInput{IncludeAllInstances: aws.Bool(true)})
	if len(withAll) != 7 || withAll[6].InstanceStatus.Status != types.SummaryStatusNotApplicable {
		t.Errorf("IncludeAllInstances: %d statuses, the terminated one %+v", len(withAll), withAll[len(withAll)-1].InstanceStatus)
	}
	// Karpenter's query: the impaired ones.
	bad, _ := list(&sdkec2.DescribeInstanceStatusInput{Filters: []types.Filter{{Name: aws.String("instance-status.status"), Values: []string{"impaired"}}}})
	if len(bad) != 1 || aws.ToString(bad[0].InstanceId) != ids[1] {
		t.Fatalf("impaired: %v, want [%s]", idsOf(bad), ids[1])
	}
	d := bad[0].InstanceStatus.Details
	if bad[0].InstanceStatus.Status != types.SummaryStatusImpaired || len(d) != 1 || d[0].Name != types.StatusNameReachability ||
		d[0].Status != types.StatusTypeFailed || !aws.ToTime(d[0].ImpairedSince).Equal(since) || bad[0].SystemStatus.Status != types.SummaryStatusOk {
		t.Errorf("impaired status %+v (system %+v)", bad[0].InstanceStatus, bad[0].SystemStatus)
	}
	for _, f := range []types.Filter{{Name: aws.String("system-status.status"), Values: []string{"impaired"}},
		{Name: aws.String("event.code"), Values: []string{"instance-reboot", "system-reboot", "system-maintenance", "instance-retirement", "instance-stop"}}} {
		if got, _ := list(&sdkec2.DescribeInstanceStatusInput{Filters: []types.Filter{f}}); len(got) != 0 {
			t.Errorf("%s: %v, want none", aws.ToString(f.Name), idsOf(got))
		}
	}
	_, err = c.DescribeInstanceStatus(ctx, &sdkec2.DescribeInstanceStatusInput{InstanceIds: ids[:1], MaxResults: aws.Int32(5)})
	if apiCode(err) != "InvalidParameterCombination" {
		t.Errorf("InstanceIds with MaxResults: %v, want InvalidParameterCombination", err)
	}
	if err := srv.Impair("i-0ffffffffffffffff", since); err == nil {
		t.Error("impairing an unknown instance succeeded")
	}
}
