package workflows

import (
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	"go.temporal.io/sdk/workflow"
)

// Repair replaces an unhealthy node (repair/<node>). It re-checks that the
// node is Joinery's (do-not-disrupt and budgets do not hold a repair
// back, as in Karpenter), taints it karpenter.sh/disrupted and records
// why. A node whose pods still run gets its replacement launched and
// Ready first, then is drained (PodDisruptionBudgets respected until the
// NodeClaim's terminationGracePeriod runs out, do-not-disrupt pods
// evicted too); if the replacement fails the node is drained all the
// same, since keeping a broken node serves nothing. An unreachable node
// (Ready=Unknown) cannot be drained: its pods are deleted and the
// instance terminated at once. Either way the node ends through its own
// NodeClaim workflow, counted as disrupted for reason unhealthy.
func Repair(ctx workflow.Context, in RepairInput) (RepairResult, error) {
	res := RepairResult{}
	phase, short, event, err := startDisruption(ctx, in.NodeName, in.Private)
	if err != nil {
		return res, err
	}
	disrupt := DisruptInput{NodeName: in.NodeName, Reason: saga.ReasonUnhealthy, Replace: true, SkipBudgets: true, Private: in.Private}
	check := disrupt
	check.Interruption = true // only "is it Joinery's node": nothing blocks a repair
	cand, _, err := checkAndTaint(ctx, short, phase, check, saga.ReasonUnhealthy)
	if err != nil || !cand.OK {
		res.Outcome, res.Why = skipped(cand, err)
		return res, err
	}
	event(EventWarning, EventNodeRepair, repairMessage(in))

	if in.Unreachable {
		phase.Set(PhaseDraining)
		if err := workflow.ExecuteActivity(short, ActivityDeleteNodePods, in.NodeName).Get(ctx, &res.Deleted); err != nil {
			return res, err
		}
	} else if err := replaceThenDrain(ctx, short, disrupt, cand, &res, phase, event); err != nil {
		return res, err
	}

	phase.Set(PhaseTerminating)
	if err := terminateDisrupted(ctx, cand, in.NodeName, "disrupted: "+saga.ReasonUnhealthy); err != nil {
		return res, err
	}
	phase.Set(PhaseDone)
	res.Outcome = PhaseDone
	return res, nil
}

// replaceThenDrain launches the node's replacements and waits until they
// are Ready, then drains it within its termination grace period.
func replaceThenDrain(ctx, short workflow.Context, in DisruptInput, cand Candidate, res *RepairResult, phase *phaseTracker, event func(string, string, string)) error {
	phase.Set(PhaseReplacing)
	names, _, err := replace(ctx, short, in)
	res.Replacements = names
	if err != nil {
		res.ReplacementFailed = err.Error()
		event(EventWarning, EventNodeRepair, "replacement not Ready ("+err.Error()+"); draining the unhealthy node anyway, its pods are provisioned afresh")
	}
	phase.Set(PhaseDraining)
	req := drainRequest(ctx, in.NodeName, cand, time.Time{})
	req.EvictDoNotDisrupt = true
	evicted, deleted, err := drainNode(ctx, req, event)
	res.Evicted += evicted
	res.Deleted += deleted
	return err
}

// repairMessage is the NodeRepair Event's text.
func repairMessage(in RepairInput) string {
	msg := fmt.Sprintf("repairing unhealthy node: %s=%s since %s, past its toleration of %s",
		in.Condition, in.Status, in.Since.UTC().Format(time.RFC3339), in.Toleration)
	if in.Message != "" {
		msg += " (" + in.Message + ")"
	}
	if in.Unreachable {
		return msg + "; the node is unreachable: its pods are deleted and the instance terminated now"
	}
	return msg + "; replacing it, then draining it"
}
