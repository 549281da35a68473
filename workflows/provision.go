package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// The Provision workflow's names.
const (
	ProvisionWorkflow        = "Provision"
	ActivityPlanProvisioning = "PlanProvisioning"
)

// ProvisionWorkflowID is the workflow id of one provisioning batch.
func ProvisionWorkflowID(batch string) string { return "provision/" + batch }

// StaticProvisionWorkflowID is the workflow id of a static NodePool's
// launches: one at a time per pool.
func StaticProvisionWorkflowID(pool string) string { return ProvisionWorkflowID("static-" + pool) }

// Provision plans one batch of pending pods and starts one NodeClaim
// lifecycle per new node; a plan of more than MaxNodeClaimsPerPlan nodes
// comes in rounds (each round's NodeClaim objects are written, and in the
// informer cache, before the next plan, which sees them in flight). The
// children outlive it (parent close policy ABANDON): Provision ends once
// every child has started, and the pods the plan could not place are
// already reported (Event on the pod) by the plan activity.
func Provision(ctx workflow.Context, in ProvisionInput) (ProvisionResult, error) {
	actx := workflow.WithActivityOptions(ctx, planCall(5))
	var res ProvisionResult
	var starting []childStart
	// awaitStarts waits until the children started so far have started.
	awaitStarts := func() error {
		for _, c := range starting {
			if err := c.Future.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
				return fmt.Errorf("start nodeclaim %s: %w", c.Name, err)
			}
			res.NodeClaims = append(res.NodeClaims, c.Name)
		}
		starting = starting[:0]
		return nil
	}
	for round := 0; round < maxPlanRounds; round++ {
		var plan ProvisionPlan
		if err := workflow.ExecuteActivity(actx, ActivityPlanProvisioning, in).Get(ctx, &plan); err != nil {
			return res, fmt.Errorf("plan: %w", err)
		}
		if round == 0 {
			res.Unschedulable = plan.unschedulable()
		}
		res.PodsPlaced += plan.PodsOnExisting
		for _, nc := range plan.NodeClaims {
			cctx := workflow.WithChildOptions(ctx, nodeClaimChild(nc))
			starting = append(starting, childStart{Name: nc.Name, Future: workflow.ExecuteChildWorkflow(cctx, NodeClaimWorkflow, nc)})
			res.PodsPlaced += nc.Pods
		}
		if !plan.More {
			break
		}
		// Version 1 plans the next round while this round's children
		// start (hundreds of child starts took seconds per round); the
		// plan already waited for its NodeClaims to reach the cache.
		if workflow.GetVersion(ctx, versionPipelinedRounds, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			if err := awaitStarts(); err != nil {
				return res, err
			}
		}
	}
	return res, awaitStarts()
}

// versionPipelinedRounds marks Provision histories whose next plan round
// is scheduled before the previous round's children have started.
const versionPipelinedRounds = "provision-pipelined-rounds"

// childStart is a NodeClaim child workflow being started.
type childStart struct {
	Name   string
	Future workflow.ChildWorkflowFuture
}
