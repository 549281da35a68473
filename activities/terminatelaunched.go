package activities

import (
	"context"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/workflows"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// terminateLaunched has EC2 terminate the request's instance, heartbeating.
// EC2 may not know an instance it launched moments ago
// (InvalidInstanceID.NotFound) while the instance runs: that is retried
// until EC2 takes the termination, and taken as "gone" only once EC2's
// consistency window has passed since the launch (Cloud.TerminateLaunched).
func (a *Lifecycle) terminateLaunched(ctx context.Context, r workflows.TerminateRequest) error {
	beat := startPulse(ctx)
	defer beat.stop()
	start := time.Now()
	res, err := a.cloud.TerminateLaunched(ctx, r.InstanceID, a.launchedBy(ctx, r.NodeClaim))
	a.metrics.CloudProviderCall(metrics.ControllerLifecycle, metrics.MethodDelete, time.Since(start).Seconds(), err != nil, cloudProviderError(err))
	if err != nil {
		return err
	}
	if res.Unseen > 0 {
		log := activityLogger(ctx, a.log).With(zap.String("nodeclaim", r.NodeClaim), zap.String("instance", r.InstanceID), zap.Duration("unseen", res.Unseen))
		if res.Accepted {
			log.Info("EC2 did not show the instance at first (eventual consistency); terminated once it did")
		} else {
			log.Warn("EC2 never showed the instance within its consistency window: taken as gone", zap.Duration("window", a.cloud.ConsistencyWindow()))
		}
	}
	return nil
}

// launchedBy is a time the NodeClaim's instance was launched at or before:
// when its Launched condition turned True (recorded after CreateFleet
// answered; a second is added for the condition's precision), zero when
// unknown (the NodeClaim is gone, or its launch was not recorded).
func (a *Lifecycle) launchedBy(ctx context.Context, name string) time.Time {
	nc, err := a.cluster.NodeClaim(ctx, name)
	if err != nil {
		return time.Time{}
	}
	c := apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionLaunched)
	if c == nil || c.Status != metav1.ConditionTrue || c.LastTransitionTime.IsZero() {
		return time.Time{}
	}
	return c.LastTransitionTime.Add(time.Second)
}
