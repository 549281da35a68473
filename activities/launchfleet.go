package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// A launch is idempotent through CreateFleet's client token, not through a
// lookup of the NodeClaim's tag: EC2 may not list an instance launched a
// second ago. An attempt that repeats one lost after CreateFleet sends the
// same token, so EC2 answers with that attempt's instance instead of
// launching another; if the repeat's plan differs (the first one's plan
// was lost with its worker), EC2 refuses it (IdempotentParameterMismatch)
// rather than launch twice.

// fleetToken is the CreateFleet client token of one LaunchInstance call:
// the NodeClaim (its UID: a NodeClaim made again under the same name is
// another launch), the call's request, and how many of its CreateFleet
// answers launched nothing (EC2 keeps an answer for its token and would
// give that refusal back).
func fleetToken(nc *apiv1.NodeClaim, req workflows.LaunchRequest, spent int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%s|%v|%d", nc.Name, nc.UID, req.CapacityType, req.Offerings, spent))
	return hex.EncodeToString(sum[:16])
}

// createFleet launches the plan. A CreateFleet answer that launched
// nothing spends the token. A token an earlier attempt used with another
// plan means that attempt reached EC2: its instance, if it launched one,
// is this NodeClaim's, found by tag once EC2 shows it (within the
// consistency window); past the window there is none, and a new token
// launches.
func (a *Launch) createFleet(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, lp launchPlan, prog *progressLog) (aws.Instance, error) {
	if prog.mayHaveLaunched() {
		if inst, ok, err := a.fromLostBatch(ctx, req); ok || err != nil {
			return inst, err
		}
	}
	for range 2 {
		token := fleetToken(nc, req, prog.Spent)
		solo := prog.mayHaveLaunched() // its client token finds what an earlier call launched
		prog.calling()
		inst, err := a.cloud.Launch(ctx, aws.LaunchRequest{
			NodeClaim: req.NodeClaim, NodePool: req.NodePool, CapacityType: req.CapacityType, Configs: lp.Configs, Prioritized: lp.Prioritized,
			ReservationType: lp.ReservationType, Interruptible: lp.Interruptible,
			Tags: launchTags(cls), ClientToken: token, Solo: solo, Context: fleetContext(nc, cls), PlacementGroupID: placementGroupOf(cls),
		})
		if ctx.Err() == nil { // else the call may still have reached EC2
			prog.returned(aws.Answered(err))
		}
		if aws.FleetAnswered(err) {
			prog.spend()
		}
		if !aws.IsIdempotentParameterMismatch(err) {
			if err == nil && inst.Tags[apiv1.TagNodeClaim] != req.NodeClaim {
				activityLogger(ctx, a.log).Warn("instance launched by a shared CreateFleet could not be tagged with its NodeClaim; "+
					"it is known by the NodeClaim's providerID", zap.String("nodeclaim", req.NodeClaim), zap.String("instance", inst.ID))
			}
			return inst, err
		}
		existing, err := a.cloud.ForNodeClaim(ctx, req.NodeClaim)
		if err != nil {
			return aws.Instance{}, err
		}
		if len(existing) > 0 {
			activityLogger(ctx, a.log).Info("an earlier attempt launched the NodeClaim's instance with another plan; using it",
				zap.String("nodeclaim", req.NodeClaim), zap.String("instance", existing[0].ID))
			return existing[0], nil
		}
		if wait := prog.unseenFor(a.cloud.Clock().Now(), a.cloud.ConsistencyWindow()); wait > 0 {
			return aws.Instance{}, fmt.Errorf("an earlier attempt reached CreateFleet for NodeClaim %s with another plan (client token %s): "+
				"waiting up to %s for EC2 to show the instance it may have launched", req.NodeClaim, token, wait.Round(time.Second))
		}
		prog.spend() // that fleet launched nothing
	}
	return aws.Instance{}, fmt.Errorf("CreateFleet for NodeClaim %s: the client token was refused twice", req.NodeClaim)
}

// fromLostBatch finds the instance a shared CreateFleet of an earlier
// attempt launched for the NodeClaim (its answer lost with its worker)
// and tags it with the NodeClaim, as that attempt would have. Until EC2's
// consistency window has passed since that batch launched, EC2 may show
// only part of it, and the pairing could give another NodeClaim's
// instance: the attempt fails and is retried. A batch EC2 does not show
// at all is taken as none (a lost solo call's client token finds its
// instance; a batch instance seen later is collected as an orphan).
func (a *Launch) fromLostBatch(ctx context.Context, req workflows.LaunchRequest) (aws.Instance, bool, error) {
	b, err := a.cloud.FromBatch(ctx, req.NodeClaim)
	if err != nil {
		return aws.Instance{}, false, err
	}
	if b.Settling > 0 {
		return aws.Instance{}, false, fmt.Errorf("an earlier attempt's shared CreateFleet launched moments ago: waiting %s for EC2 to show all of it",
			b.Settling.Round(time.Second))
	}
	in, ok := liveOf(b.Mine)
	if !ok {
		return aws.Instance{}, false, nil
	}
	if err := a.cloud.Claim(ctx, in.ID, req.NodeClaim); err != nil {
		return aws.Instance{}, false, fmt.Errorf("tagging instance %s with NodeClaim %s: %w", in.ID, req.NodeClaim, err)
	}
	in.Tags[apiv1.TagNodeClaim], in.Tags[apiv1.TagName] = req.NodeClaim, req.NodeClaim
	activityLogger(ctx, a.log).Info("an earlier attempt's shared CreateFleet launched the NodeClaim's instance; using it",
		zap.String("nodeclaim", req.NodeClaim), zap.String("instance", in.ID))
	return in, true, nil
}

// liveOf is the first instance not shutting down or gone.
func liveOf(insts []aws.Instance) (aws.Instance, bool) {
	for _, in := range insts {
		if in.State == aws.StatePending || in.State == aws.StateRunning {
			return in, true
		}
	}
	return aws.Instance{}, false
}

// deletedBeforeLaunch answers for a NodeClaim deleted before its launch
// was recorded (it has no finalizer until then). An earlier attempt, lost
// with its worker after CreateFleet answered, may have launched its
// instance: it is returned for the saga to terminate. EC2 may not show an
// instance launched moments ago, so when an earlier attempt may have
// reached CreateFleet, finding none is trusted only once the consistency
// window has passed; until then the attempt fails and is retried.
func (a *Launch) deletedBeforeLaunch(ctx context.Context, req workflows.LaunchRequest, prog *progressLog) (workflows.Instance, error) {
	existing, err := a.cloud.ForNodeClaim(ctx, req.NodeClaim)
	if err != nil {
		return workflows.Instance{}, err
	}
	if len(existing) > 0 {
		return a.toInstance(existing[0]), nil
	}
	earlier := prog.Plan != nil || (activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1)
	if earlier {
		b, err := a.cloud.FromBatch(ctx, req.NodeClaim)
		if err != nil {
			return workflows.Instance{}, err
		}
		if b.Settling > 0 {
			return workflows.Instance{}, fmt.Errorf("NodeClaim %s was deleted during its launch: waiting %s for EC2 to show all of a shared CreateFleet it was in",
				req.NodeClaim, b.Settling.Round(time.Second))
		}
		if in, ok := liveOf(b.Mine); ok {
			return a.toInstance(in), nil
		}
		if wait := prog.unseenFor(a.cloud.Clock().Now(), a.cloud.ConsistencyWindow()); wait > 0 {
			return workflows.Instance{}, fmt.Errorf("NodeClaim %s was deleted during its launch: waiting up to %s for EC2 to show an instance an earlier attempt may have launched",
				req.NodeClaim, wait.Round(time.Second))
		}
	}
	return workflows.Instance{}, temporal.NewNonRetryableApplicationError("NodeClaim deleted before launch", workflows.ErrNodeClaimGone, nil)
}

// templateWait bounds how long one attempt waits for EC2 to show a launch
// template made a moment ago (1+2+4+8 s), well within its minute.
const templateWait = 15 * time.Second

// createFleetOnceVisible is createFleet, repeated (backing off from 1 s,
// templateWait in all) while CreateFleet does not find a launch template
// made within EC2's consistency window: EC2 shows a new template moments
// later, and waiting here spares the attempt a failure and a retry.
func (a *Launch) createFleetOnceVisible(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, lp launchPlan, prog *progressLog) (aws.Instance, error) {
	clk, waited := a.cloud.Clock(), time.Duration(0)
	for wait := time.Second; ; wait *= 2 {
		inst, err := a.createFleet(ctx, nc, cls, req, lp, prog)
		if !aws.IsLaunchTemplateNotFound(err) || a.justMade(lp) == "" || waited >= templateWait {
			return inst, err
		}
		select {
		case <-ctx.Done():
			return inst, err
		case <-clk.After(wait):
		}
		waited += wait
	}
}

// justMade names a template of the plan EC2 made within its consistency
// window ("" for none).
func (a *Launch) justMade(lp launchPlan) string {
	now, window := a.cloud.Clock().Now(), a.cloud.ConsistencyWindow()
	for _, c := range lp.Configs {
		if made, ok := a.templates.made(c.LaunchTemplateName); ok && now.Sub(made) < window {
			return c.LaunchTemplateName
		}
	}
	return ""
}

// templateNotFound handles CreateFleet not knowing a template of the plan.
// One made within EC2's consistency window may only be not visible yet:
// the plan is kept and the attempt retried. Otherwise it was deleted: the
// caches and the plan are dropped, and the next attempt makes it again.
func (a *Launch) templateNotFound(ctx context.Context, lp launchPlan, prog *progressLog, err error) error {
	if name := a.justMade(lp); name != "" {
		activityLogger(ctx, a.log).Info("launch template not visible to CreateFleet yet (eventual consistency); retrying",
			zap.String("launchTemplate", name))
		return fmt.Errorf("launch template %s, made moments ago, is not visible to EC2 yet: %w", name, err)
	}
	a.templates.forget()
	prog.forget()
	return err
}

// profileNotReady handles EC2 refusing the class's instance profile. IAM
// changes take a while to reach EC2 (a new profile, a role just added):
// this is no capacity shortage (no offering is marked unavailable) but a
// wait. The NodeClaim says why (Launched=False,
// InstanceProfileNotPropagated), so does an Event on it and on its
// EC2NodeClass, and the attempt is retried.
func (a *Launch) profileNotReady(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, fe aws.FleetError) error {
	msg := fmt.Sprintf("EC2 does not accept instance profile %s yet (IAM changes take a while to reach EC2); retrying: %s: %s",
		cls.Status.InstanceProfile, fe.Code, fe.Message)
	a.launchFailed(ctx, nc, apiv1.ReasonInstanceProfileNotPropagated, errors.New(msg))
	now := time.Now()
	if a.cluster.Recorder != nil {
		refs := map[string]*corev1.ObjectReference{
			"nodeclaim/" + nc.Name:  {APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: nc.Name},
			"nodeclass/" + cls.Name: {APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: cls.Name},
		}
		for key, ref := range refs {
			if a.events.first(key+"/"+apiv1.ReasonInstanceProfileNotPropagated, time.Minute, now) {
				a.cluster.Recorder.Event(ref, corev1.EventTypeWarning, apiv1.ReasonInstanceProfileNotPropagated, msg)
			}
		}
	}
	activityLogger(ctx, a.log).Warn("instance profile not propagated to EC2 yet; retrying the launch", zap.String("nodeclaim", nc.Name),
		zap.String("nodeclass", cls.Name), zap.String("instanceProfile", cls.Status.InstanceProfile), zap.String("error", fe.Message))
	return errors.New(msg)
}

// fleetContext is the class's spec.context for CreateFleet, left out, as
// Karpenter leaves it, when the NodeClaim's minValues were relaxed.
func fleetContext(nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass) string {
	if cls.Spec.Context == nil || nc.Annotations[apiv1.AnnotationNodeClaimMinValuesRelaxed] == "true" {
		return ""
	}
	return *cls.Spec.Context
}
