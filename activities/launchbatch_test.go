package activities

import (
	"context"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lostBatch launches req's NodeClaim and two others in one shared
// CreateFleet whose NodeClaim tags are never written (CreateTags refused,
// as for a worker killed right after CreateFleet), waits out the client's
// consistency window and returns the instance the batch gave req's
// NodeClaim.
func lostBatch(t *testing.T, a *Activities, srv *simec2.Server, req workflows.LaunchRequest, window time.Duration) aws.Instance {
	t.Helper()
	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	if _, err := srv.CreateLaunchTemplate("lost-batch", simec2.LaunchTemplateData{ImageID: img}, nil); err != nil {
		t.Fatal(err)
	}
	sns, err := a.Launch.cloud.Subnets(context.Background(), []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Refuse("CreateTags", "InternalError")
	var mu sync.Mutex
	got := map[string]aws.Instance{}
	var wg sync.WaitGroup
	for _, name := range []string{req.NodeClaim, "general-purpose-b", "general-purpose-c"} {
		wg.Go(func() {
			in, err := a.Launch.cloud.Launch(context.Background(), aws.LaunchRequest{NodeClaim: name, NodePool: req.NodePool,
				CapacityType: apiv1.CapacityTypeOnDemand, InstanceTypes: []string{"m5.large"}, Subnets: sns, LaunchTemplateName: "lost-batch"})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[name] = in
			mu.Unlock()
		})
	}
	wg.Wait()
	srv.Refuse("CreateTags", "")
	if n := len(srv.Instances()); n != 3 || got[req.NodeClaim].Tags[apiv1.TagNodeClaim] != "" {
		t.Fatalf("%d instances, %s answered %+v: want 3 from one batch, untagged", n, req.NodeClaim, got[req.NodeClaim])
	}
	time.Sleep(window)
	return got[req.NodeClaim]
}

// A launch whose worker died during a shared CreateFleet (its heartbeat
// says Calling), before the instances were tagged: the retry finds the
// instance the batch launched for its NodeClaim, tags it and returns it,
// and buys no other.
func TestALaunchLostInASharedCreateFleetClaimsItsInstance(t *testing.T) {
	window := 300 * time.Millisecond
	a, srv, req := launchWorldOpts(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{ConsistencyWindow: window}, nil, func(*Deps) {})
	lost := lostBatch(t, a, srv, req, window)
	again, _, calls, err := launchAttempt(t, a, srv, req, &launchProgress{Calling: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != lost.ID || calls["CreateFleet"] != 0 {
		t.Fatalf("retry returned %s with EC2 calls %v; want the batch's %s and no CreateFleet", again.ID, calls, lost.ID)
	}
	if in, _ := srv.Instance(lost.ID); in.Tags[apiv1.TagNodeClaim] != req.NodeClaim || in.Tags[apiv1.TagName] != req.NodeClaim {
		t.Errorf("instance %s tags %v, want its NodeClaim's", lost.ID, in.Tags)
	}
	if n := len(srv.Instances()); n != 3 {
		t.Errorf("%d instances, want the batch's 3", n)
	}
}

// The same lost batch, its NodeClaim deleted meanwhile (a gang's
// compensation): the retry returns the batch's instance for the saga to
// terminate.
func TestADeletedNodeClaimOfALostBatchReturnsItsInstance(t *testing.T) {
	window := 300 * time.Millisecond
	a, srv, req := launchWorldOpts(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{ConsistencyWindow: window}, nil, func(*Deps) {})
	lost := lostBatch(t, a, srv, req, window)
	if err := a.cluster().Dynamic.Resource(apiv1.NodeClaimGVR).Delete(context.Background(), req.NodeClaim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	plan := &launchPlan{Configs: []aws.LaunchConfig{{LaunchTemplateName: "lost-batch"}}}
	again, _, calls, err := launchAttempt(t, a, srv, req, &launchProgress{Calling: true, Plan: plan})
	if err != nil {
		t.Fatalf("retry after the deletion: %v", err)
	}
	if again.ID != lost.ID || calls["CreateFleet"] != 0 {
		t.Fatalf("retry returned %s with EC2 calls %v; want the batch's %s and no CreateFleet", again.ID, calls, lost.ID)
	}
	if len(srv.Instances()) != 3 {
		t.Errorf("%d instances, want the batch's 3", len(srv.Instances()))
	}
}
