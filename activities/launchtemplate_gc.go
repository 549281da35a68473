package activities

import (
	"context"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/policy/nodeclass"
)

// templateGC lets garbage collection delete the cluster's launch templates
// no launch needs any more. A template is needed while a NodeClaim of its
// NodePool and EC2NodeClass is still launching (no instance yet); running
// nodes do not need theirs, and a launch that finds its template gone
// makes it again.
type templateGC struct{ a *Launch }

func (t templateGC) List(ctx context.Context) ([]gc.LaunchTemplate, error) {
	lts, err := t.a.cloud.LaunchTemplates(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gc.LaunchTemplate, 0, len(lts))
	for _, lt := range lts {
		out = append(out, gc.LaunchTemplate{Name: lt.Name, Created: lt.Created})
	}
	return out, nil
}

func (t templateGC) InUse(ctx context.Context) (map[string]bool, error) {
	lts, err := t.a.cloud.LaunchTemplates(ctx)
	if err != nil {
		return nil, err
	}
	launching := map[[2]string]bool{}
	for _, nc := range t.a.cluster.NodeClaims() {
		if nc.Status.ProviderID == "" && nc.Spec.NodeClassRef != nil {
			launching[[2]string{nc.Labels[apiv1.LabelNodePool], nc.Spec.NodeClassRef.Name}] = true
		}
	}
	inUse := map[string]bool{}
	for _, lt := range lts {
		if launching[[2]string{lt.Tags[apiv1.TagNodePool], lt.Tags[nodeclass.TagNodeClass]}] {
			inUse[lt.Name] = true
		}
	}
	return inUse, nil
}

func (t templateGC) Delete(ctx context.Context, name string) error {
	lts, err := t.a.cloud.LaunchTemplates(ctx)
	if err != nil {
		return err
	}
	for _, lt := range lts {
		if lt.Name == name {
			t.a.templates.forget()
			return t.a.cloud.DeleteLaunchTemplate(ctx, lt.ID)
		}
	}
	return nil
}
