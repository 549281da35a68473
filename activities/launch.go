package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/cloud"
	"github.com/joinery/joinery/nodeclass"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LaunchInstance launches the NodeClaim's instance with one CreateFleet
// call over the request's offerings (one capacity type), from launch
// templates built from its EC2NodeClass's resolved status. It is
// idempotent: an instance already tagged with this NodeClaim is returned as
// is, and the CreateFleet client token is derived from the request. When
// every offering failed for capacity it returns a non-retryable
// ErrInsufficientCapacity error whose details are the failed offerings
// (also put in the ICE cache).
func (a *Activities) LaunchInstance(ctx context.Context, req workflows.LaunchRequest) (workflows.Instance, error) {
	beat := startPulse(ctx)
	defer beat.stop()
	nc, err := a.Cluster.NodeClaim(ctx, req.NodeClaim)
	if apierrors.IsNotFound(err) {
		return workflows.Instance{}, temporal.NewNonRetryableApplicationError("NodeClaim deleted before launch", workflows.ErrNodeClaimGone, err)
	}
	if err != nil {
		return workflows.Instance{}, err
	}
	lp, resumed := resumedPlan(ctx)
	// A resumed attempt's CreateFleet carries the earlier attempt's client
	// token, so EC2 answers with the instance that attempt may have
	// launched; only a deleted NodeClaim needs the lookup first.
	if !resumed || nc.DeletionTimestamp != nil {
		if existing, err := a.Cloud.ForNodeClaim(ctx, req.NodeClaim); err != nil {
			return workflows.Instance{}, err
		} else if len(existing) > 0 {
			return a.toInstance(existing[0]), nil
		}
	}
	if nc.DeletionTimestamp != nil {
		return workflows.Instance{}, temporal.NewNonRetryableApplicationError("NodeClaim deleted before launch", workflows.ErrNodeClaimGone, nil)
	}
	cls, err := a.Cluster.NodeClass(nc.Spec.NodeClassRef.Name)
	if err != nil {
		return workflows.Instance{}, err
	}
	if !resumed {
		if lp, err = a.planLaunch(ctx, nc, cls, req); err != nil {
			return workflows.Instance{}, err
		}
		beat.carry(lp)
	}
	token := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%v", req.NodeClaim, req.CapacityType, lp.Configs)))
	inst, err := a.Cloud.Launch(ctx, cloud.LaunchRequest{
		NodeClaim: req.NodeClaim, NodePool: req.NodePool, CapacityType: req.CapacityType, Configs: lp.Configs,
		Tags: launchTags(cls), ClientToken: hex.EncodeToString(token[:16]),
	})
	if cloud.IsLaunchTemplateNotFound(err) {
		a.templates.forget()
		beat.carry() // the next attempt makes its templates again
		return workflows.Instance{}, err
	}
	var ice *cloud.InsufficientCapacityError
	if errors.As(err, &ice) {
		return workflows.Instance{}, a.insufficientCapacity(ctx, nc, req, ice)
	}
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonLaunchFailed, err)
		return workflows.Instance{}, err
	}
	out := a.toInstance(inst)
	out.ImageID, out.SubnetID, out.SecurityGroupIDs = lp.Image[out.InstanceType], lp.Subnet[out.Zone], lp.SecurityGroups
	a.subnets.used(cls.Name, out.SubnetID)
	a.Metrics.NodeClaimLaunched(req.NodePool, out.InstanceType, out.CapacityType, out.Zone)
	a.logger(ctx).Info("instance launched", zap.String("nodeclaim", req.NodeClaim), zap.String("instance", out.ID),
		zap.String("instanceType", out.InstanceType), zap.String("zone", out.Zone), zap.String("capacityType", out.CapacityType),
		zap.String("image", out.ImageID), zap.String("subnet", out.SubnetID), zap.Bool("resumed", resumed))
	return out, nil
}

// planLaunch is the launch plan of a NodeClaim whose class is Ready, over
// launchOfferings (the request's, widened to meet minValues); a failure is
// set on the NodeClaim (Launched=False) and retried, except minValues that
// cannot be met (non-retryable, see launchOfferings).
func (a *Activities) planLaunch(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest) (launchPlan, error) {
	if why := nodeclass.NotReady(cls); why != "" {
		err := errors.New(why)
		a.launchFailed(ctx, nc, "NodeClassNotReady", err)
		return launchPlan{}, err // the reconciler may resolve it
	}
	offs, err := a.launchOfferings(nc, cls, req)
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonInsufficientCapacity, err)
		return launchPlan{}, err
	}
	req.Offerings = offs
	lp, err := a.launchPlan(ctx, nc, cls, req)
	if err != nil {
		a.launchFailed(ctx, nc, apiv1.ReasonLaunchFailed, err)
	}
	return lp, err
}

// resumedPlan is the launch plan an earlier attempt of this activity
// carried in its heartbeat: a retry after a lost worker goes straight to
// CreateFleet instead of resolving subnets and templates again.
func resumedPlan(ctx context.Context) (launchPlan, bool) {
	var lp launchPlan
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return lp, false
	}
	if err := activity.GetHeartbeatDetails(ctx, &lp); err != nil || len(lp.Configs) == 0 {
		return launchPlan{}, false
	}
	return lp, true
}

// launchFailed sets Launched=False on the NodeClaim with the reason and
// the error (best effort: the workflow decides what happens next).
func (a *Activities) launchFailed(ctx context.Context, nc *apiv1.NodeClaim, reason string, cause error) {
	msg := cause.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	conds := apiv1.SetCondition(nc.Status.Conditions, metav1.Condition{Type: apiv1.ConditionLaunched, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg}, metav1.Now())
	_ = a.Cluster.PatchNodeClaimStatus(ctx, nc.Name, mustJSON(map[string]interface{}{"status": map[string]interface{}{"conditions": conds}}))
}

// insufficientCapacity records the failed offerings and returns the
// non-retryable error the saga falls back on.
func (a *Activities) insufficientCapacity(ctx context.Context, nc *apiv1.NodeClaim, req workflows.LaunchRequest, ice *cloud.InsufficientCapacityError) error {
	var failed []workflows.Offering
	for _, o := range ice.Offerings {
		a.ICE.MarkUnavailable(o.InstanceType, o.Zone, o.CapacityType)
		a.Metrics.OfferingInsufficient(o.InstanceType, o.Zone, o.CapacityType)
		failed = append(failed, workflows.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
	}
	a.logger(ctx).Warn("insufficient capacity", zap.String("nodeclaim", req.NodeClaim), zap.Error(ice))
	a.launchFailed(ctx, nc, apiv1.ReasonInsufficientCapacity, ice)
	return temporal.NewNonRetryableApplicationError(ice.Error(), workflows.ErrInsufficientCapacity, nil, failed)
}

func (a *Activities) toInstance(i cloud.Instance) workflows.Instance {
	out := workflows.Instance{ID: i.ID, InstanceType: i.Type, Zone: i.Zone, CapacityType: i.CapacityType, ProviderID: i.ProviderID()}
	if it, ok := a.instanceType(i.Type); ok {
		out.Price = a.Market.Price(it, i.Zone, i.CapacityType)
	}
	return out
}

// shapeOf is the node shape of an instance type under a NodeClaim's NodeClass.
func (a *Activities) shapeOf(nc *apiv1.NodeClaim, instanceType string) (catalog.NodeShape, bool) {
	it, ok := a.instanceType(instanceType)
	if !ok {
		return catalog.NodeShape{}, false
	}
	launch, _ := a.claimLaunch(nc)
	return it.ShapeOf(launch), true
}

// claimLaunch is how a NodeClaim's node is launched, from its NodeClass
// (nil when the class is not known: EKS defaults).
func (a *Activities) claimLaunch(nc *apiv1.NodeClaim) (catalog.Launch, *apiv1.EC2NodeClass) {
	if nc.Spec.NodeClassRef != nil {
		if cls, err := a.Cluster.NodeClass(nc.Spec.NodeClassRef.Name); err == nil {
			return catalog.LaunchOf(&cls.Spec), cls
		}
	}
	return catalog.LaunchOf(nil), nil
}
