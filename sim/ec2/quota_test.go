package ec2_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/joinery/joinery/sim/ec2"
)

// A vCPU quota counts the running vCPUs of its bucket and capacity type:
// a launch past it is refused with EC2's code for the market, another
// bucket or market is not affected, a terminated instance frees its share,
// and one request cannot pass the quota by launching several instances.
func TestVCPUQuota(t *testing.T) {
	srv, c := start(t, ec2.Options{TerminateDelay: -1})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	m5 := [][2]string{{"m5.xlarge", sub["us-east-1a"]}, {"c5.xlarge", sub["us-east-1b"]}} // 4 vCPUs each, Standard
	srv.SetVCPUQuota("standard", "spot", 8)
	srv.SetVCPUQuota("standard", "on-demand", 4)

	out, err := c.CreateFleet(ctx, fleet("spot", 3, m5, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(launchedIDs(out)) != 2 {
		t.Fatalf("spot quota 8: launched %d m5/c5.xlarge, want 2 (errors %v)", len(launchedIDs(out)), codes(out.Errors))
	}
	if !allCodes(out.Errors, ec2.CodeMaxSpotInstanceCountExceeded) {
		t.Errorf("past the spot quota: %v, want MaxSpotInstanceCountExceeded", codes(out.Errors))
	}
	// On-demand is another quota: one fits, the second is refused.
	for i, want := range []int{1, 0} {
		out, err := c.CreateFleet(ctx, fleet("on-demand", 1, m5, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(launchedIDs(out)); got != want {
			t.Fatalf("on-demand launch %d: %d instances, want %d (%v)", i, got, want, codes(out.Errors))
		}
		if want == 0 && !allCodes(out.Errors, ec2.CodeVcpuLimitExceeded) {
			t.Errorf("past the on-demand quota: %v, want VcpuLimitExceeded", codes(out.Errors))
		}
	}
	// Another bucket (G) is not affected.
	g := [][2]string{{"g4dn.xlarge", sub["us-east-1a"]}}
	if out, err := c.CreateFleet(ctx, fleet("spot", 1, g, nil)); err != nil || len(out.Instances) != 1 {
		t.Fatalf("G bucket: %+v, %v", out, err)
	}
	// A terminated spot instance frees its vCPUs.
	spot := launchedIDs(out)
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: spot[:1]}); err != nil {
		t.Fatal(err)
	}
	waitTerminated(t, srv, spot[0])
	if out, err := c.CreateFleet(ctx, fleet("spot", 1, m5, nil)); err != nil || len(out.Instances) != 1 {
		t.Fatalf("after a termination: %+v, %v", out, err)
	}
}

func launchedIDs(out *sdkec2.CreateFleetOutput) []string {
	var ids []string
	for _, in := range out.Instances {
		ids = append(ids, in.InstanceIds...)
	}
	return ids
}

func codes(errs []types.CreateFleetError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, aws.ToString(e.ErrorCode))
	}
	return out
}

func allCodes(errs []types.CreateFleetError, code string) bool {
	for _, e := range errs {
		if aws.ToString(e.ErrorCode) != code {
			return false
		}
	}
	return len(errs) > 0
}

func waitTerminated(t *testing.T, srv *ec2.Server, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, in := range srv.Instances() {
			if in.ID == id && in.State == ec2.StateTerminated {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not terminated", id)
}
