package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/joinery/joinery/workflows"
)

// Recreated nodes are written as NodeClaims pinned to the shape asked, in
// the named pool when it can hold them (gp: on-demand m7i/c7i), with one
// offering each; a shape no pool allows (spot, a family gp excludes) is
// reported short, not bought as something else.
func TestRecreateNodeClaims(t *testing.T) {
	a := staticFixture(t, true)
	out, err := a.Provisioning.PlanProvisioning(context.Background(), workflows.ProvisionInput{BatchID: "replay-0", Recreate: []workflows.RecreateNodes{
		{NodePool: "gone", InstanceType: "m7i.2xlarge", Zone: "us-east-1b", CapacityType: "on-demand", Count: 2},
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand", Count: 1},
		{InstanceType: "c7i.large", Zone: "us-east-1a", CapacityType: "spot", Count: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NodeClaims) != 2 {
		t.Fatalf("%d NodeClaims, want 2: %+v", len(out.NodeClaims), out.NodeClaims)
	}
	for _, in := range out.NodeClaims {
		o := in.Offerings
		if in.NodePool != "gp" || len(o) != 1 || o[0].InstanceType != "m7i.2xlarge" || o[0].Zone != "us-east-1b" || o[0].CapacityType != "on-demand" {
			t.Errorf("nodeclaim %s in %s offerings %+v, want gp's one m7i.2xlarge on-demand in us-east-1b", in.Name, in.NodePool, o)
		}
	}
	if out.UnschedulableTotal != 2 || len(out.Unschedulable) != 2 || !strings.Contains(out.Unschedulable[1], "spot c7i.large") {
		t.Errorf("short: %d %v, want the m5.large and the spot c7i.large", out.UnschedulableTotal, out.Unschedulable)
	}
}
