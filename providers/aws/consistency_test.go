package aws_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testclock"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simiam "github.com/joinery/joinery/sim/iam"
)

const window = 5 * time.Second

// consistentWorld is the local EC2 with a read-after-write window and a
// client, both on one fake clock.
func consistentWorld(t *testing.T) (*simec2.Server, *aws.Client, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC))
	srv, c := world(t, simec2.Options{Consistency: window, Now: clk.Now, BootDelay: -1, TerminateDelay: -1},
		aws.Options{Clock: clk, ConsistencyWindow: 2 * window})
	return srv, c, clk
}

func terminateDriven(t *testing.T, c *aws.Client, clk *clocktesting.FakeClock, id string, launchedBy time.Time) aws.Termination {
	t.Helper()
	defer testclock.Drive(clk, time.Millisecond)()
	res, err := c.TerminateLaunched(context.Background(), id, launchedBy)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An instance terminated right after its launch, while EC2 does not show it
// yet, is terminated once EC2 does: NotFound is not taken as "gone".
func TestTerminateLaunchedOutlastsTheWindow(t *testing.T) {
	srv, c, clk := consistentWorld(t)
	in, err := c.Launch(context.Background(), launchReq(subnets(t, c), apiv1.CapacityTypeOnDemand, "m5.large"))
	if err != nil {
		t.Fatal(err)
	}
	res := terminateDriven(t, c, clk, in.ID, clk.Now())
	got, _ := srv.Instance(in.ID)
	if !res.Accepted || res.Unseen < window/2 || got.State != simec2.StateTerminated {
		t.Fatalf("termination %+v, instance %s", res, got.State)
	}
}

// An instance EC2 never shows is gone once the window has passed since its
// launch (at once for one launched long ago).
func TestTerminateLaunchedGivesUpAfterTheWindow(t *testing.T) {
	_, c, clk := consistentWorld(t)
	start := clk.Now()
	res := terminateDriven(t, c, clk, "i-0123456789abcdef0", start)
	if res.Accepted || clk.Since(start) < 2*window || clk.Since(start) > 2*window+10*time.Second {
		t.Fatalf("termination %+v after %s, want gone after the window (%s)", res, clk.Since(start), 2*window)
	}
	before := clk.Now()
	if res := terminateDriven(t, c, clk, "i-0123456789abcdef0", before.Add(-time.Hour)); res.Accepted || clk.Since(before) != 0 {
		t.Fatalf("an instance launched an hour ago: %+v after %s", res, clk.Since(before))
	}
}

// A launch template EC2 does not show yet is still one that exists when
// CreateLaunchTemplate says its name is taken.
func TestEnsureLaunchTemplateWithinTheWindow(t *testing.T) {
	srv, c, _ := consistentWorld(t)
	img, _, _, _ := srv.SSMParameter(al2023x86)
	d := aws.LaunchTemplateData{ImageID: img}
	first, err := c.EnsureLaunchTemplate(context.Background(), "joinery/fresh", d)
	if err != nil || first.ID == "" {
		t.Fatalf("create: %+v %v", first, err)
	}
	again, err := c.EnsureLaunchTemplate(context.Background(), "joinery/fresh", d)
	if err != nil || again.Name != "joinery/fresh" {
		t.Fatalf("ensure within the window: %+v %v", again, err)
	}
}

// A launch EC2 refuses because the new instance profile has not reached it
// is no capacity shortage: no offering goes into the ICE cache, the error
// says why, and the launch works once the profile has propagated.
func TestUnpropagatedProfileIsNotInsufficientCapacity(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC))
	iam := simiam.New(simiam.Options{Propagation: window, Now: clk.Now})
	iamURL, stop, err := iam.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ice := aws.NewICECache(0, clk.Now)
	srv, url := endpoint(t, simec2.Options{BootDelay: -1, InstanceProfile: iam.InstanceProfileARN, InstanceProfileHasRole: iam.InstanceProfileHasRole})
	c := client(t, url, aws.Options{IAMEndpoint: iamURL, ICECache: ice, Clock: clk})
	ctx := context.Background()
	if err := c.EnsureInstanceProfile(ctx, aws.InstanceProfile{Name: "fresh", Role: simiam.DefaultRole}); err != nil {
		t.Fatal(err)
	}
	img, _, _, _ := srv.SSMParameter(al2023x86)
	if _, err := c.EnsureLaunchTemplate(ctx, "joinery/profiled", aws.LaunchTemplateData{ImageID: img, InstanceProfile: "fresh"}); err != nil {
		t.Fatal(err)
	}
	req := launchReq(subnets(t, c), apiv1.CapacityTypeOnDemand, "m5.large", "c5.large")
	req.LaunchTemplateName = "joinery/profiled"
	_, err = c.Launch(ctx, req)
	fe, ok := aws.InstanceProfileNotReady(err)
	if !ok || aws.IsInsufficientCapacity(err) || len(ice.Entries()) != 0 {
		t.Fatalf("launch before propagation: %v (profile error %v, ICE entries %v)", err, ok, ice.Entries())
	}
	var nl *aws.NoLaunchError
	if !errors.As(err, &nl) || nl.Errors[len(nl.Errors)-1].Code != "UnfulfillableCapacity" {
		t.Fatalf("EC2's request-configuration summary is missing: %v", err)
	}
	t.Logf("refused: %s", fe)
	clk.Step(window)
	if _, err := c.Launch(ctx, req); err != nil {
		t.Fatalf("launch after propagation: %v", err)
	}
}
