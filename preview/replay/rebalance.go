package replay

import (
	"context"
	"fmt"
	"io"

	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/client"
)

// Recreator is a --rebalance-only replay's Runner.Recreate: each batch of
// recorded nodes is bought by one Provision workflow that writes
// NodeClaims of the same shapes (ProvisionInput.Recreate), as the recorded
// cluster bought them, while the controller runs no provisioning of its
// own (controller.Features.DisableProvisioning). Nodes no NodePool can
// launch are reported on Log and left out.
type Recreator struct {
	Temporal client.Client
	Log      io.Writer
	// NodeClaims, when set, is told the NodeClaims each batch wrote.
	NodeClaims func(names []string)
	batch      int
}

// Recreate buys the nodes' shapes and returns once their sagas started.
func (r *Recreator) Recreate(ctx context.Context, nodes []RecordedNode) error {
	r.batch++
	in := workflows.ProvisionInput{BatchID: fmt.Sprintf("replay-%d", r.batch), Recreate: nodeShapes(nodes)}
	run, err := r.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ProvisionWorkflowID(in.BatchID), TaskQueue: workflows.TaskQueue},
		workflows.ProvisionWorkflow, in)
	if err != nil {
		return err
	}
	var res workflows.ProvisionResult
	if err := run.Get(ctx, &res); err != nil {
		return err
	}
	if res.Unschedulable > 0 && r.Log != nil {
		fmt.Fprintf(r.Log, "replay: %d of %d recorded nodes not recreated: no NodePool can launch their shape (workflow %s)\n",
			res.Unschedulable, len(nodes), run.GetID())
	}
	if r.NodeClaims != nil {
		r.NodeClaims(res.NodeClaims)
	}
	return nil
}

// nodeShapes counts the nodes by NodePool, instance type, zone and
// capacity type, in the order first seen.
func nodeShapes(nodes []RecordedNode) []workflows.RecreateNodes {
	var out []workflows.RecreateNodes
	index := map[workflows.RecreateNodes]int{}
	for _, n := range nodes {
		k := workflows.RecreateNodes{NodePool: n.NodePool, InstanceType: n.InstanceType, Zone: n.Zone, CapacityType: n.CapacityType}
		i, ok := index[k]
		if !ok {
			i, index[k] = len(out), len(out)
			out = append(out, k)
		}
		out[i].Count++
	}
	return out
}
