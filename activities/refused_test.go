package activities

import (
	"context"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// A launch EC2 refuses for lack of IAM permission is reported as such:
// Launched=False with reason Unauthorized, and nothing in the ICE cache.
func TestRefusedLaunchIsUnauthorizedNotCapacity(t *testing.T) {
	a, srv, req := launchWorld(t)
	srv.Refuse("CreateFleet", simec2.CodeUnauthorizedOperation)
	if _, _, _, err := launchAttempt(t, a, srv, req, nil); err == nil {
		t.Fatal("the refused launch succeeded")
	}
	nc, err := a.Launch.cluster.NodeClaim(context.Background(), req.NodeClaim)
	if err != nil {
		t.Fatal(err)
	}
	c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionLaunched)
	if c == nil || c.Reason != apiv1.ReasonUnauthorized || !strings.Contains(c.Message, "UnauthorizedOperation") {
		t.Errorf("Launched = %+v, want reason Unauthorized", c)
	}
	if n := len(a.Launch.ice.Entries()); n != 0 {
		t.Errorf("%d offerings marked insufficient after a refusal", n)
	}
}
