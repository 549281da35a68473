package aws_test

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// A gang's cluster group: created tagged (cluster, created-at, the
// caller's), found again by name when it exists, listed by tag key,
// deleted (an unknown one counts as deleted).
func TestClusterPlacementGroupLifecycle(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	tags := map[string]string{apiv1.TagProvisioningRequest: "ml.training"}
	pg, err := w.c.EnsureClusterPlacementGroup(ctx, "joinery-gang-u-1", tags)
	if err != nil || pg.ID == "" || pg.Name != "joinery-gang-u-1" || pg.Strategy != "cluster" {
		t.Fatalf("create: %+v, %v", pg, err)
	}
	again, err := w.c.EnsureClusterPlacementGroup(ctx, "joinery-gang-u-1", tags)
	if err != nil || again.ID != pg.ID {
		t.Errorf("again: %+v, %v; want the same group", again, err)
	}
	if _, err := w.c.EnsureClusterPlacementGroup(ctx, "someone-elses", nil); err != nil {
		t.Fatal(err)
	}
	owned, err := w.c.OwnedPlacementGroups(ctx, apiv1.TagProvisioningRequest)
	if err != nil || len(owned) != 1 || owned[0].ID != pg.ID || owned[0].Tags[apiv1.TagProvisioningRequest] != "ml.training" ||
		owned[0].Tags[apiv1.TagCluster] == "" || owned[0].Created.IsZero() {
		t.Errorf("owned: %+v, %v; want the gang's group, tagged, with its creation time", owned, err)
	}
	if err := w.c.DeletePlacementGroup(ctx, "joinery-gang-u-1"); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DeletePlacementGroup(ctx, "joinery-gang-u-1"); err != nil {
		t.Errorf("deleting a group gone: %v, want none", err)
	}
}
