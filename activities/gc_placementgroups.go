package activities

import (
	"context"
	"errors"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
)

// addPlacementGroups adds to the pass's snapshot the cluster placement
// groups gang tries created (tagged with the cluster and a request) and
// the ones NodeClaims still name.
func (a *GC) addPlacementGroups(ctx context.Context, s *gc.Snapshot) error {
	gs, err := a.cloud.OwnedPlacementGroups(ctx, apiv1.TagProvisioningRequest)
	if err != nil {
		return err
	}
	for _, g := range gs {
		s.PlacementGroups = append(s.PlacementGroups, gc.PlacementGroup{Name: g.Name, ID: g.ID, Created: g.Created})
	}
	s.GroupsInUse = a.groupsInUse()
	return nil
}

// groupsInUse are the gang placement groups NodeClaims name.
func (a *GC) groupsInUse() map[string]bool {
	out := map[string]bool{}
	for _, nc := range a.cluster.NodeClaims() {
		if id := nc.Labels[apiv1.LabelGangPlacementGroup]; id != "" {
			out[id] = true
		}
	}
	return out
}

// CollectPlacementGroups deletes gang placement groups no NodeClaim names
// (re-checked by name against the groups' ids); one EC2 still holds
// instances in is kept, for a later pass.
func (a *GC) CollectPlacementGroups(ctx context.Context, c workflows.GCCollect) (workflows.GCResult, error) {
	res := workflows.GCResult{Collected: map[string][]workflows.GCItem{}}
	gs, err := a.cloud.OwnedPlacementGroups(ctx, apiv1.TagProvisioningRequest)
	if err != nil {
		return res, err
	}
	ids := map[string]string{}
	for _, g := range gs {
		ids[g.Name] = g.ID
	}
	inUse := a.groupsInUse()
	for _, it := range c.Items {
		id, ok := ids[it.Name]
		if !ok {
			continue // gone already
		}
		if inUse[id] {
			res.Kept = append(res.Kept, it.Name)
			continue
		}
		err := a.cloud.DeletePlacementGroup(ctx, it.Name)
		if errors.Is(err, aws.ErrPlacementGroupInUse) {
			res.Kept = append(res.Kept, it.Name)
			continue
		}
		if err != nil {
			return res, err
		}
		res.Collected[workflows.GCKindPlacementGroup] = append(res.Collected[workflows.GCKindPlacementGroup], it)
		a.collected(ctx, workflows.GCKindPlacementGroup, it, "deleted placement group "+it.Name+": "+it.Why)
	}
	return res, nil
}
