//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/provreq"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// gangGroups are the placement groups EC2 holds for the request
// default/training.
func gangGroups(e *env) []ec2.PlacementGroup {
	var out []ec2.PlacementGroup
	for _, g := range e.w.EC2.PlacementGroups() {
		if g.Tags[apiv1.TagProvisioningRequest] == "default.training" {
			out = append(out, g)
		}
	}
	return out
}

// TestGangClusterPlacementGroup: examples/gang.yaml's request for 4 GPU
// pods with joinery.sh/placement: cluster. The EC2 endpoint first supplies
// 3 on-demand instances: the try creates its cluster placement group,
// launches into it, fails all or nothing and deletes the group once its
// instances are gone. With the capacity back, the next try's 4 nodes all
// run in its own new cluster group, in one zone, each Node labelled with
// the group. When the nodes are deleted, the garbage collector deletes the
// group. Every call runs under deploy/iam-policy.json.
func TestGangClusterPlacementGroup(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := startEnvWith(t, false)
	recordWorkerIAM(t, e, "gangplacement") // CreatePlacementGroup tagged on creation; DeletePlacementGroup
	e.w.EC2.SetPoolCapacity("", "", "on-demand", 3)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.GangDeadline, c.GCInterval, c.GCLaunchGrace = 3*time.Minute, 5*time.Second, 5*time.Second
	})
	objs := readManifests(t, "../../examples/nodepools.yaml", "../../examples/gang.yaml")
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ProvisioningRequest" {
			if err := unstructured.SetNestedField(o.Object, gang.PlacementCluster, "spec", "parameters", gang.ParamPlacement); err != nil {
				t.Fatal(err)
			}
		}
		if o.GetKind() != "NodePool" || o.GetName() == "gpu" {
			keep = append(keep, o)
		}
	}
	e.apply(t, keep)

	// Try with 3 of 4: its group is created, used, then deleted.
	var seen ec2.PlacementGroup
	waitFor(t, 2*time.Minute, "a gang instance in a new cluster group", func() bool {
		for _, in := range liveInstances(e) {
			for _, g := range gangGroups(e) {
				if in.PlacementGroupID == g.ID {
					seen = g
					return true
				}
			}
		}
		return false
	})
	if seen.Strategy != ec2.PlacementStrategyCluster || seen.Tags[apiv1.TagCluster] == "" {
		t.Errorf("the try's group %+v: want a cluster group tagged with the cluster", seen)
	}
	pr := waitTryFailed(t, e, 2*time.Minute)
	checkNothingLeft(t, e, pr)
	waitFor(t, 2*time.Minute, "the failed try's group deleted", func() bool {
		for _, g := range e.w.EC2.PlacementGroups() {
			if g.ID == seen.ID {
				return false
			}
		}
		return true
	})
	failedTry := pr.Status.ProvisioningClassDetails[provreq.DetailTry]
	t.Logf("try %s: group %s (%s) created, launched into, deleted after the try failed; %s after start",
		failedTry, seen.Name, seen.ID, time.Since(start).Round(time.Second))

	e.w.EC2.SetPoolCapacity("", "", "on-demand", -1)
	waitFor(t, 3*time.Minute, "Provisioned=True", func() bool {
		pr = provReq(e)
		return pr != nil && pr.Is(provreq.Provisioned)
	})
	checkOneGroup(t, e, pr)

	// The nodes go: the group is left to the garbage collector.
	dc := dynamicClient(t, e)
	for _, nc := range gangClaims(t, e) {
		if err := dc.Resource(apiv1.NodeClaimGVR).Delete(e.ctx, nc.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deleted := time.Now()
	waitFor(t, 3*time.Minute, "every gang group deleted", func() bool { return len(gangGroups(e)) == 0 && len(liveInstances(e)) == 0 })
	t.Logf("the provisioned try's group collected %s after its NodeClaims were deleted; test %s",
		time.Since(deleted).Round(time.Second), time.Since(start).Round(time.Second))
	var try int
	if _, err := fmt.Sscan(failedTry, &try); err == nil {
		recordHistoryAs(t, e, workflows.GangWorkflowID("default", "training", string(pr.UID), try), "gang-placement-group")
	}
	recordHistoryAs(t, e, workflows.GarbageCollectionWorkflowID, "gc-placement-groups")
	_, ops, _ := workerChecks(t, e)
	if ops["ec2:CreatePlacementGroup"] < 2 || ops["ec2:DeletePlacementGroup"] < 2 {
		t.Errorf("worker calls %v: want CreatePlacementGroup and DeletePlacementGroup for both tries", ops)
	}
}

// checkOneGroup: every instance of the provisioned try is in one cluster
// group, the try's (gang.GroupName), in one zone, and its Node says so.
func checkOneGroup(t *testing.T, e *env, pr *provreq.ProvisioningRequest) {
	t.Helper()
	var try int
	if _, err := fmt.Sscan(pr.Status.ProvisioningClassDetails[provreq.DetailTry], &try); err != nil {
		t.Fatalf("details %v: no try", pr.Status.ProvisioningClassDetails)
	}
	groups := gangGroups(e)
	if len(groups) != 1 || !strings.HasPrefix(groups[0].Name, gang.GroupName("", string(pr.UID), try)) {
		t.Fatalf("gang groups %+v: want only try %d's", groups, try)
	}
	g := groups[0]
	live := liveInstances(e)
	zones := map[string]int{}
	for _, in := range live {
		zones[in.Zone]++
		if in.PlacementGroupID != g.ID {
			t.Errorf("instance %s (%s) in group %q, want %s", in.ID, in.InstanceType, in.PlacementGroupID, g.ID)
		}
	}
	if len(live) != 4 || len(zones) != 1 {
		t.Errorf("%d instances in zones %v, want 4 in one", len(live), zones)
	}
	for _, nc := range gangClaims(t, e) {
		if l := nc.GetLabels(); l[apiv1.LabelPlacementGroupID] != g.ID || l[apiv1.LabelGangPlacementGroup] != g.ID {
			t.Errorf("NodeClaim %s labels %v: want the group %s", nc.GetName(), l, g.ID)
		}
	}
	t.Logf("try %d: 4 instances in cluster group %s (%s), zones %v", try, g.Name, g.ID, zones)
}
