package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Provision plans one batch of pending pods and starts one NodeClaim
// lifecycle per new node; a plan of more than MaxNodeClaimsPerPlan nodes
// comes in rounds (each round's sagas start before the next plan, which
// sees their NodeClaims in flight). The children outlive it (parent close policy
// ABANDON): Provision ends once every child has started, and the pods the
// plan could not place are already reported (Event on the pod) by the plan
// activity.
func Provision(ctx workflow.Context, in ProvisionInput) (ProvisionResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5,
		},
	})
	var res ProvisionResult
	for round := 0; round < maxPlanRounds; round++ {
		var plan ProvisionPlan
		if err := workflow.ExecuteActivity(actx, ActivityPlanProvisioning, in).Get(ctx, &plan); err != nil {
			return res, fmt.Errorf("plan: %w", err)
		}
		if round == 0 {
			res.Unschedulable = plan.unschedulable()
		}
		res.PodsPlaced += plan.PodsOnExisting
		futures := make([]workflow.ChildWorkflowFuture, 0, len(plan.NodeClaims))
		for _, nc := range plan.NodeClaims {
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID:        NodeClaimWorkflowID(nc.Name),
				TaskQueue:         TaskQueue,
				ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
				TypedSearchAttributes: temporal.NewSearchAttributes(
					SANodeClaim.ValueSet(nc.Name), SANodePool.ValueSet(nc.NodePool), SAPhase.ValueSet(PhaseLaunching)),
			})
			futures = append(futures, workflow.ExecuteChildWorkflow(cctx, NodeClaimWorkflow, nc))
			res.PodsPlaced += nc.Pods
		}
		for i, f := range futures {
			if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
				return res, fmt.Errorf("start nodeclaim %s: %w", plan.NodeClaims[i].Name, err)
			}
			res.NodeClaims = append(res.NodeClaims, plan.NodeClaims[i].Name)
		}
		if !plan.More {
			break
		}
	}
	return res, nil
}
