package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LaunchInstance launches the NodeClaim's instance with one CreateFleet
// call over the request's offerings (one capacity type), from launch
// templates built from its EC2NodeClass's resolved status. It is
// idempotent through the CreateFleet client token (createFleet); a
// NodeClaim deleted meanwhile gets the instance an earlier attempt
// launched, if any (deletedBeforeLaunch). When
// every offering failed for capacity it returns a non-retryable
// ErrInsufficientCapacity error whose details are the failed offerings
// (also put in the ICE cache).
func (a *Launch) LaunchInstance(ctx context.Context, req workflows.LaunchRequest) (workflows.Instance, error) {
	start := time.Now()
	inst, err := a.launchInstance(ctx, req)
	a.metrics.CloudProviderCall(metrics.ControllerLifecycle, metrics.MethodCreate, time.Since(start).Seconds(), err != nil, cloudProviderError(err))
	return inst, err
}

// cloudProviderError is the error label of karpenter_cloudprovider_errors_total:
// Karpenter's well-known error names, "" for the rest.
func cloudProviderError(err error) string {
	var app *temporal.ApplicationError
	var ice *aws.InsufficientCapacityError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ice):
		return metrics.ErrorInsufficientCapacity
	case aws.IsNotFound(err):
		return metrics.ErrorNodeClaimNotFound
	case errors.As(err, &app):
		switch app.Type() {
		case workflows.ErrInsufficientCapacity:
			return metrics.ErrorInsufficientCapacity
		case workflows.ErrNodeClaimGone:
			return metrics.ErrorNodeClaimNotFound
		}
	}
	var notReady classNotReadyError
	if errors.As(err, &notReady) {
		return metrics.ErrorNodeClassNotReady
	}
	return ""
}

// classNotReadyError: the NodeClaim's EC2NodeClass is not Ready (why).
type classNotReadyError string

func (e classNotReadyError) Error() string { return string(e) }

func (a *Launch) launchInstance(ctx context.Context, req workflows.LaunchRequest) (workflows.Instance, error) {
	prog := resumeLaunch(ctx)
	defer prog.beat.stop()
	nc, err := a.cluster.NodeClaim(ctx, req.NodeClaim)
	if apierrors.IsNotFound(err) || (err == nil && nc.DeletionTimestamp != nil) {
		return a.deletedBeforeLaunch(ctx, req, prog)
	}
	if err != nil {
		return workflows.Instance{}, err
	}
	cls, err := a.cluster.NodeClass(nc.Spec.NodeClassRef.Name)
	if err != nil {
		return workflows.Instance{}, err
	}
	// A resumed attempt launches the plan its earlier attempt carried, with
	// the same client token (createFleet).
	resumed := prog.Plan != nil
	if !resumed {
		lp, err := a.planLaunch(ctx, nc, cls, req, prog)
		var short *aws.InsufficientCapacityError
		if errors.As(err, &short) {
			return workflows.Instance{}, a.insufficientCapacity(ctx, nc, req, short)
		}
		if err != nil {
			return workflows.Instance{}, err
		}
		prog.planned(lp)
	}
	lp := *prog.Plan
	inst, err := a.createFleetOnceVisible(ctx, nc, cls, req, lp, prog)
	a.settleAddresses(cls, req, lp, inst, err)
	if aws.IsLaunchTemplateNotFound(err) {
		return workflows.Instance{}, a.templateNotFound(ctx, lp, prog, err)
	}
	var ice *aws.InsufficientCapacityError
	if errors.As(err, &ice) {
		return workflows.Instance{}, a.insufficientCapacity(ctx, nc, req, ice)
	}
	if fe, ok := aws.InstanceProfileNotReady(err); ok {
		return workflows.Instance{}, a.profileNotReady(ctx, nc, cls, fe)
	}
	if ae, ok := aws.AsUnauthorized(err); ok {
		a.refused(ctx, nc, ae)
		return workflows.Instance{}, err
	}
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonLaunchFailed, err)
		return workflows.Instance{}, err
	}
	out := a.toInstance(inst)
	if lp.Prioritized {
		out.Price = plannedPrice(req.Offerings, out)
	}
	out.ImageID, out.SubnetID, out.SecurityGroupIDs = lp.Image[out.InstanceType], lp.Subnet[out.Zone], lp.SecurityGroups
	if out.CapacityReservationID != "" {
		a.market.ReservationLaunched(out.CapacityReservationID)
	}
	a.metrics.NodeClaimLaunched(req.NodePool, out.InstanceType, out.CapacityType, out.Zone)
	activityLogger(ctx, a.log).Info("instance launched", zap.String("nodeclaim", req.NodeClaim), zap.String("instance", out.ID),
		zap.String("instanceType", out.InstanceType), zap.String("zone", out.Zone), zap.String("capacityType", out.CapacityType),
		zap.String("image", out.ImageID), zap.String("subnet", out.SubnetID), zap.Bool("resumed", resumed))
	return out, nil
}

// planLaunch is the launch plan of a NodeClaim whose class is Ready, over
// launchOfferings (the request's, widened to meet minValues); a failure is
// set on the NodeClaim (Launched=False) and retried, except minValues that
// cannot be met (non-retryable, see launchOfferings).
func (a *Launch) planLaunch(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, prog *progressLog) (launchPlan, error) {
	if why := nodeclass.NotReady(cls); why != "" {
		err := classNotReadyError(why)
		a.launchFailed(ctx, nc, "NodeClassNotReady", err)
		return launchPlan{}, err // the reconciler may resolve it
	}
	offs, err := a.launchOfferings(nc, cls, req)
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonInsufficientCapacity, err)
		return launchPlan{}, err
	}
	req.Offerings = offs
	lp, err := a.launchPlan(ctx, nc, cls, req, prog)
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonLaunchFailed, err)
	}
	lp.Prioritized = a.pricesOverlaid(req.NodePool, cls, offs)
	return lp, err
}

// launchFailed sets Launched=False on the NodeClaim with the reason and
// the error (best effort: the workflow decides what happens next).
func (a *Launch) launchFailed(ctx context.Context, nc *apiv1.NodeClaim, reason string, cause error) {
	if aws.IsUnauthorized(cause) {
		reason = apiv1.ReasonUnauthorized // e.g. CreateLaunchTemplate refused while planning
	}
	msg := cause.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	conds := apiv1.SetCondition(nc.Status.Conditions, metav1.Condition{Type: apiv1.ConditionLaunched, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg}, metav1.Now())
	_ = a.cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{"conditions": conds}}))
}

// refused reports an IAM refusal of the launch where an operator looks:
// Launched=False with reason Unauthorized, a Warning Event on the
// NodeClaim and an error log, each naming the action and the resource.
// It is a policy to fix, not a lack of capacity: no offering is marked.
func (a *Launch) refused(ctx context.Context, nc *apiv1.NodeClaim, ae *aws.AuthorizationError) {
	activityLogger(ctx, a.log).Error("AWS refused the launch: the worker's IAM policy does not allow it", zap.String("nodeclaim", nc.Name),
		zap.String("action", ae.Action), zap.String("resource", ae.Resource), zap.String("code", ae.Code), zap.Error(ae.Err))
	msg := fmt.Sprintf("AWS refused %s (%s): the worker's IAM policy does not allow it", ae.What(), ae.Code)
	if a.cluster.Recorder != nil {
		a.cluster.Recorder.Event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: nc.Name, UID: nc.UID},
			corev1.EventTypeWarning, apiv1.ReasonUnauthorized, msg)
	}
	a.launchFailed(ctx, nc, apiv1.ReasonUnauthorized, errors.New(msg))
}

// insufficientCapacity records the failed offerings and returns the
// non-retryable error the saga falls back on.
func (a *Launch) insufficientCapacity(ctx context.Context, nc *apiv1.NodeClaim, req workflows.LaunchRequest, ice *aws.InsufficientCapacityError) error {
	var failed []saga.Offering
	a.reservationsOut(req, ice)
	for _, o := range ice.Offerings {
		if o.CapacityType != apiv1.CapacityTypeReserved {
			a.ice.MarkAll([]aws.OfferingKey{o}) // within its placement group, if any
		}
		a.metrics.OfferingInsufficient(o.InstanceType, o.Zone, o.CapacityType)
		failed = append(failed, saga.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
	}
	activityLogger(ctx, a.log).Warn("insufficient capacity", zap.String("nodeclaim", req.NodeClaim), zap.Error(ice))
	a.launchFailed(ctx, nc, apiv1.ReasonInsufficientCapacity, ice)
	return temporal.NewNonRetryableApplicationError(ice.Error(), workflows.ErrInsufficientCapacity, nil, failed)
}

// reservationsOut counts used up, until EC2 reports a new count, each
// reservation a reserved launch was refused for capacity
// (ReservationCapacityExceeded or another insufficient-capacity code), as
// Karpenter marks the reservation ids unavailable; the (type, zone,
// reserved) offering is not put in the ICE cache, so other reservations
// of the type in the zone stay available.
func (a *Launch) reservationsOut(req workflows.LaunchRequest, ice *aws.InsufficientCapacityError) {
	for _, fe := range ice.Errors {
		if fe.Offering.CapacityType != apiv1.CapacityTypeReserved || !aws.IsUnfulfillableCode(fe.Code) {
			continue
		}
		for _, o := range req.Offerings {
			if o.ReservationID != "" && o.InstanceType == fe.Offering.InstanceType && o.Zone == fe.Offering.Zone {
				a.market.ReservationUsedUp(o.ReservationID)
			}
		}
	}
}

// plannedPrice is the price the plan gave the launched offering (after
// NodeOverlays); the list price when the offering is not among them.
func plannedPrice(offs []saga.Offering, in workflows.Instance) float64 {
	for _, o := range offs {
		if o.InstanceType == in.InstanceType && o.Zone == in.Zone && o.CapacityType == in.CapacityType {
			return o.Price
		}
	}
	return in.Price
}

func (a *Launch) toInstance(i aws.Instance) workflows.Instance {
	out := workflows.Instance{ID: i.ID, InstanceType: i.Type, Zone: i.Zone, CapacityType: i.CapacityType, ProviderID: i.ProviderID(),
		CapacityReservationID: i.CapacityReservationID, ReservationType: i.ReservationType, ReservationInterruptible: i.ReservationInterruptible}
	if it, ok := a.types.Get(i.Type); ok {
		out.Price = a.market.Price(it, i.Zone, i.CapacityType)
	}
	return out
}
