package aws_test

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

func TestImpairedInstances(t *testing.T) {
	srv, c := world(t, simec2.Options{BootDelay: -1}, aws.Options{})
	ctx := context.Background()
	sn := subnets(t, c)
	var ids []string
	for i := 0; i < 2; i++ {
		req := launchReq(sn, apiv1.CapacityTypeOnDemand, "m5.large")
		req.NodeClaim = req.NodeClaim + string(rune('a'+i))
		in, err := c.Launch(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	if got, err := c.ImpairedInstances(ctx); err != nil || len(got) != 0 {
		t.Fatalf("healthy: %v, %v", got, err)
	}
	since := time.Now().Add(-5 * time.Minute).UTC().Truncate(time.Millisecond)
	if err := srv.Impair(ids[1], since); err != nil {
		t.Fatal(err)
	}
	got, err := c.ImpairedInstances(ctx)
	if err != nil || len(got) != 1 || got[0].ID != ids[1] || got[0].Check != "instance" || !got[0].Since.Equal(since) {
		t.Fatalf("impaired: %+v, %v; want %s (instance check) since %s", got, err, ids[1], since)
	}
	srv.Refuse("DescribeInstanceStatus", simec2.CodeUnauthorizedOperation)
	if _, err := c.ImpairedInstances(ctx); !aws.IsUnauthorized(err) {
		t.Errorf("refused: %v, want UnauthorizedOperation", err)
	}
}
