package controller

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/api/provreq"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	"k8s.io/client-go/tools/cache"
)

// gangChainGrace is how long after a failed try's announced next try the
// reconciler waits before it starts that try itself (the failed try
// starts it; this catches a chain broken by hand, e.g. a terminated workflow).
const gangChainGrace = time.Minute

// gangReconciler starts the first try (gang/<ns>/<name>/1) of every
// ProvisioningRequest Joinery honours, leader only, and reports the ones it
// does not honour (class, invalid spec). Each try starts the next itself
// after its backoff; ids are never reused (REJECT_DUPLICATE), so a request
// is never tried twice at once and a finished try is never rerun.
type gangReconciler struct {
	cl      *kube.Cluster
	acts    *activities.Activities
	log     *zap.Logger
	start   func(ctx context.Context, in workflows.GangInput) error
	every   time.Duration
	trigger chan struct{}
	input   func(pr *provreq.ProvisioningRequest, try int) workflows.GangInput
}

func newGangReconciler(cl *kube.Cluster, acts *activities.Activities, tc client.Client, cfg Config, log *zap.Logger) *gangReconciler {
	deadline, booking := cfg.GangDeadline, cfg.GangBooking
	if deadline <= 0 {
		deadline = gang.DefaultDeadline
	}
	if booking <= 0 {
		booking = gang.DefaultBooking
	}
	var backoff []time.Duration
	for t := 1; len(backoff) == 0 || backoff[len(backoff)-1] < gang.MaxBackoff; t++ {
		backoff = append(backoff, gang.Backoff(t))
	}
	r := &gangReconciler{cl: cl, acts: acts, log: log.Named("gang"), every: 5 * time.Second, trigger: make(chan struct{}, 1)}
	r.input = func(pr *provreq.ProvisioningRequest, try int) workflows.GangInput {
		return workflows.GangInput{Namespace: pr.Namespace, Name: pr.Name, UID: string(pr.UID), Try: try,
			Deadline: deadline, Booking: booking, Backoff: backoff}
	}
	r.start = func(ctx context.Context, in workflows.GangInput) error {
		_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.GangWorkflowID(in.Namespace, in.Name, in.UID, in.Try), TaskQueue: workflows.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SAPhase.ValueSet(workflows.PhasePlanning)),
		}, workflows.GangWorkflow, in)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil
		}
		return err
	}
	poke := func() {
		select {
		case r.trigger <- struct{}{}:
		default:
		}
	}
	cl.OnProvisioningRequestEvent(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { poke() },
		UpdateFunc: func(interface{}, interface{}) { poke() },
	})
	return r
}

func (r *gangReconciler) run(ctx context.Context) { reconcileLoop(ctx, r.every, r.trigger, 0, r.pass) }

// pass looks at every request once.
func (r *gangReconciler) pass(ctx context.Context, now time.Time) {
	prs, bad := r.cl.ProvisioningRequests()
	for _, b := range bad {
		r.log.Error("provisioning request not read", zap.String("error", b))
	}
	for _, pr := range prs {
		if pr.DeletionTimestamp != nil || gang.Done(pr) {
			continue
		}
		if ok, why := gang.Honoured(pr.Spec.ProvisioningClassName); !ok {
			if err := r.acts.Gang.ReportNotHonoured(ctx, pr, gang.ReasonClassNotHonoured, why); err != nil {
				r.log.Warn("provisioning request status", zap.Error(err))
			}
			continue
		}
		if err := pr.Validate(); err != nil {
			if err := r.acts.Gang.ReportNotHonoured(ctx, pr, gang.ReasonInvalid, err.Error()); err != nil {
				r.log.Warn("provisioning request status", zap.Error(err))
			}
			continue
		}
		try := nextGangTry(pr, now)
		if try == 0 {
			continue
		}
		if err := r.start(ctx, r.input(pr, try)); err != nil {
			r.log.Warn("gang try not started", zap.String("provisioningrequest", pr.Namespace+"/"+pr.Name), zap.Int("try", try), zap.Error(err))
		}
	}
}

// nextGangTry is the try the reconciler (re)starts: 1 for a request no
// try has reported on, the announced next one when its time is more than
// gangChainGrace past, else 0 (a try is running or starts the next).
func nextGangTry(pr *provreq.ProvisioningRequest, now time.Time) int {
	d := pr.Status.ProvisioningClassDetails
	n, err := strconv.Atoi(d[provreq.DetailTry])
	if err != nil || n < 1 {
		return 1
	}
	next, err := time.Parse(time.RFC3339, d[provreq.DetailNextTry])
	if err != nil || now.Before(next.Add(gangChainGrace)) {
		return 0
	}
	return n + 1
}
