package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// VersionFinalizerTermination gates the NodeClaim saga's changes for
// finalizer-driven termination (a NodeClaim deleted while it launches or
// registers runs the ending below; one deleted before launch has its
// finalizer removed).
const VersionFinalizerTermination = "finalizer-termination"

// terminateNode is a deleted node's ending, in the node's own history:
// BeginTermination (delete the NodeClaim and Node if not yet, stamp the
// grace deadline), TaintNodeDisrupted, the drain (the same drainNode as
// DrainAndReplace: tiers, Eviction API, PDBs, deadline), WaitVolumesDetached
// (bounded by the deadline, else MaxVolumeDetachWait), TerminateInstance
// (until EC2 reports it terminated), then RemoveTerminationFinalizers
// (the Node's, then the NodeClaim's: both objects go). Every activity is
// idempotent, so a worker killed anywhere resumes it.
func terminateNode(ctx workflow.Context, req TerminationRequest, phase *phaseTracker) (TerminationResult, error) {
	var res TerminationResult
	short := workflow.WithActivityOptions(ctx, shortCall())
	phase.Set(PhaseTerminating)
	var plan TerminationPlan
	if err := workflow.ExecuteActivity(short, ActivityBeginTermination, req).Get(ctx, &plan); err != nil {
		return res, err
	}
	res.NodeName, res.InstanceID = plan.NodeName, plan.InstanceID
	if plan.NodeName != "" {
		if err := workflow.ExecuteActivity(short, ActivityTaintDisrupted, TaintRequest{
			NodeName: plan.NodeName, NodeClaim: req.NodeClaim, Reason: "deleted",
		}).Get(ctx, nil); err != nil {
			return res, err
		}
		phase.Set(PhaseDraining)
		event := nodeEvents(ctx, short, EventRequest{Node: plan.NodeName})
		var err error
		res.Evicted, res.Deleted, err = drainNode(ctx, DrainRequest{NodeName: plan.NodeName, Deadline: plan.Deadline}, event)
		if err != nil {
			return res, err
		}
		now := workflow.Now(ctx)
		until := now.Add(MaxVolumeDetachWait)
		if !plan.Deadline.IsZero() {
			until = plan.Deadline
		}
		// Past the grace deadline the volumes are not waited for (as Karpenter).
		if until.After(now) {
			vol := workflow.WithActivityOptions(ctx, volumesDetached(until.Sub(now)))
			var vs VolumeStatus
			if err := workflow.ExecuteActivity(vol, ActivityWaitVolumesDetached, VolumeWait{NodeName: plan.NodeName, Until: until}).Get(ctx, &vs); err != nil {
				return res, err
			}
			res.VolumesLeft = vs.Attached
		}
	}
	phase.Set(PhaseTerminating)
	if plan.InstanceID != "" {
		if err := workflow.ExecuteActivity(withTerminateOptions(ctx), ActivityTerminateInstance, TerminateRequest{
			NodeClaim: req.NodeClaim, InstanceID: plan.InstanceID, NodeName: plan.NodeName, Reason: req.Reason, InstanceOnly: true,
		}).Get(ctx, nil); err != nil {
			return res, err
		}
	}
	if err := workflow.ExecuteActivity(short, ActivityRemoveFinalizers, TerminateRequest{
		NodeClaim: req.NodeClaim, InstanceID: plan.InstanceID, NodeName: plan.NodeName, Reason: req.Reason,
	}).Get(ctx, nil); err != nil {
		return res, err
	}
	phase.Set(PhaseTerminated)
	return res, nil
}

// NodeClaimTermination is the ending alone, as a new run of
// nodeclaim/<name>, for a deleted NodeClaim or Node whose NodeClaim
// workflow is not running (it ended, was terminated by an operator, or the
// NodeClaim was never Joinery's to launch): the controller's deletion
// watch starts it when its signal finds no running workflow.
func NodeClaimTermination(ctx workflow.Context, req TerminationRequest) (TerminationResult, error) {
	phase, err := trackPhase(ctx, PhaseTerminating)
	if err != nil {
		return TerminationResult{}, err
	}
	return terminateNode(ctx, req, phase)
}
