package replay

import (
	"context"
	"fmt"
	"io"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Recreator is a --rebalance-only replay's Runner.Recreate: each batch of
// recorded nodes is bought by one Provision workflow that writes
// NodeClaims of the same shapes (ProvisionInput.Recreate), as the recorded
// cluster bought them, while the controller runs no provisioning of its
// own (controller.Features.DisableProvisioning). Nodes no NodePool can
// launch are reported on Log and left out.
type Recreator struct {
	Temporal client.Client
	// Dynamic, when set, is read before the first batch: the plan only
	// uses NodePools whose EC2NodeClass is Ready, which takes a few
	// seconds after they are applied.
	Dynamic dynamic.Interface
	Log     io.Writer
	// NodeClaims, when set, is told the NodeClaims each batch wrote.
	NodeClaims func(names []string)
	batch      int
}

// Recreate buys the nodes' shapes and returns once their sagas started.
func (r *Recreator) Recreate(ctx context.Context, nodes []RecordedNode) error {
	if r.batch == 0 && r.Dynamic != nil {
		if err := classesReady(ctx, r.Dynamic, classWait); err != nil {
			return err
		}
	}
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

// classWait bounds the wait for the EC2NodeClasses to be Ready.
const classWait = 2 * time.Minute

// classesReady waits until there are EC2NodeClasses and every one is
// Ready.
func classesReady(ctx context.Context, dc dynamic.Interface, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list, err := dc.Resource(apiv1.EC2NodeClassGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := len(list.Items) > 0
		for _, u := range list.Items {
			ready = ready && conditionTrue(u.Object, apiv1.ConditionReady)
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("EC2NodeClasses not Ready after %s: no NodePool could launch the recorded nodes", timeout)
		}
		if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
			return err
		}
	}
}

func conditionTrue(obj map[string]any, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		if cm, _ := c.(map[string]any); cm["type"] == typ {
			return cm["status"] == "True"
		}
	}
	return false
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
