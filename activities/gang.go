package activities

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/api/provreq"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Gang NodeClaim marks.
const (
	// LabelProvisioningRequest on a NodeClaim names the request
	// (<namespace>.<name>) a gang try launched it for.
	LabelProvisioningRequest = "joinery.sh/provisioning-request"
	// LabelGangTry is the try's number.
	LabelGangTry = "joinery.sh/gang-try"
	// AnnotationBookedUntil (RFC 3339) holds a provisioned gang's nodes
	// for its pods: until then they are not disrupted and their capacity
	// is not planned for other pods (nor while the try is launching).
	AnnotationBookedUntil = "joinery.sh/booked-until"
)

// gangKey is the value of LabelProvisioningRequest.
func gangKey(namespace, name string) string { return namespace + "." + name }

// booked reports whether a NodeClaim is held for a gang: launched by a
// try and not initialized yet, or provisioned and within its booking.
func booked(nc *apiv1.NodeClaim, now time.Time) bool {
	if nc.Labels[LabelProvisioningRequest] == "" {
		return false
	}
	if v := nc.Annotations[AnnotationBookedUntil]; v != "" {
		until, err := time.Parse(time.RFC3339, v)
		return err == nil && now.Before(until)
	}
	return !disruption.Initialized(nc)
}

// bookedFor says what books a NodeClaim ("" when nothing does), for
// disruption's reasons.
func bookedFor(nc *apiv1.NodeClaim, now time.Time) string {
	if !booked(nc, now) {
		return ""
	}
	ns, name, _ := strings.Cut(nc.Labels[LabelProvisioningRequest], ".")
	if until := nc.Annotations[AnnotationBookedUntil]; until != "" {
		return fmt.Sprintf("ProvisioningRequest %s/%s until %s", ns, name, until)
	}
	return fmt.Sprintf("ProvisioningRequest %s/%s while its try launches", ns, name)
}

// PlanGang plans every pod of a ProvisioningRequest in one solve over the
// cluster's snapshot (the request's pods instead of the pending ones). A
// plan that leaves any pod unplaced writes nothing and says why
// (gang.Check); otherwise it writes one NodeClaim per new node, labelled
// with the request, and returns their sagas' inputs. A request gone,
// replaced (another UID), already provisioned, not honoured or invalid is
// Done (the last two are reported on the request).
func (a *Gang) PlanGang(ctx context.Context, in workflows.GangInput) (workflows.GangPlan, error) {
	log := activityLogger(ctx, a.log).With(zap.String("provisioningrequest", in.Namespace+"/"+in.Name), zap.Int("try", in.Try))
	pr, done, err := a.triable(ctx, in, log)
	if pr == nil || done || err != nil {
		return workflows.GangPlan{Done: done}, err
	}
	pods, why, err := a.gangPods(ctx, pr)
	if err != nil {
		return workflows.GangPlan{}, err
	}
	if why != "" {
		return workflows.GangPlan{Pods: pr.Pods(), Reason: gang.ReasonInvalid, Message: why}, nil
	}
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil {
		return workflows.GangPlan{}, err
	}
	pg, err := a.gangGroup(ctx, pr, in.Try)
	if err != nil {
		return workflows.GangPlan{}, err
	}
	snap, plan, err := a.solveGang(ctx, pods, pg)
	if err != nil {
		return workflows.GangPlan{}, err
	}
	nodeclass.CapReservations(plan.NewNodeClaims, reservationBudget(a.cluster, a.market))
	var unplaced []gang.Unplaced
	for _, u := range plan.Unschedulable {
		if len(snap.notReady) > 0 {
			u.Reason += "; " + strings.Join(snap.notReady, "; ") // as PlanProvisioning says it
		}
		unplaced = append(unplaced, gang.Unplaced{Pod: u.Pod, Reason: u.Reason})
	}
	out := workflows.GangPlan{Pods: len(pods), OnExisting: len(plan.ExistingPlacements)}
	v := gang.Check(len(pods), unplaced)
	if !v.OK {
		out.Reason, out.Message = v.Reason, v.Message
		log.Warn("gang plan leaves pods unplaced: nothing launched", zap.String("reason", v.Message))
		a.dropGroup(ctx, pg, log)
		return out, nil
	}
	if len(plan.NewNodeClaims) > workflows.MaxNodeClaimsPerPlan {
		out.Reason, out.Message = gang.ReasonCapacityNotFound, fmt.Sprintf("the plan needs %d nodes, more than the %d one try launches",
			len(plan.NewNodeClaims), workflows.MaxNodeClaimsPerPlan)
		a.dropGroup(ctx, pg, log)
		return out, nil
	}
	snap.claimLabels = map[string]string{LabelProvisioningRequest: gangKey(pr.Namespace, pr.Name), LabelGangTry: strconv.Itoa(in.Try)}
	if pg != nil {
		// The workflow deletes the group if the try fails.
		snap.claimLabels[apiv1.LabelGangPlacementGroup] = pg.ID
		out.PlacementGroup = pg.Name
	}
	var names []string
	for _, nn := range plan.NewNodeClaims {
		nc, nin, err := a.claims.write(ctx, snap, batch, nn)
		if err != nil {
			return out, err
		}
		names = append(names, nc.Name)
		out.NodeClaims = append(out.NodeClaims, nin)
		a.metrics.NodeClaimCreatedBy(nn.NodePool, "provisioned", nn.MinValuesRelaxed)
		log.Info("gang nodeclaim planned", zap.String("nodeclaim", nc.Name), zap.String("nodepool", nn.NodePool),
			zap.Int("pods", len(nn.Pods)), zap.String("cheapest", nin.Offerings[0].InstanceType), zap.String("zone", nin.Offerings[0].Zone))
	}
	if err := a.cluster.WaitNodeClaimsCached(ctx, names, cacheWait); err != nil {
		return out, err
	}
	out.OK = true
	log.Info("gang plan: every pod placed", zap.Int("pods", len(pods)), zap.Int("nodeclaims", len(names)), zap.Int("onExisting", out.OnExisting))
	return out, nil
}

// triable is the request a try plans for, or done when there is none to
// make: the request is gone, replaced (another UID), already provisioned,
// not honoured, invalid or past its validUntilSeconds (the last three are
// reported on the request).
func (a *Gang) triable(ctx context.Context, in workflows.GangInput, log *zap.Logger) (*provreq.ProvisioningRequest, bool, error) {
	pr, err := a.cluster.ProvisioningRequest(in.Namespace, in.Name)
	if err != nil {
		return nil, false, err
	}
	if pr == nil || string(pr.UID) != in.UID || pr.DeletionTimestamp != nil {
		log.Info("provisioning request gone: no try")
		return nil, true, nil
	}
	if gang.Done(pr) {
		return nil, true, nil
	}
	if ok, why := gang.Honoured(pr.Spec.ProvisioningClassName); !ok {
		return nil, true, a.ReportNotHonoured(ctx, pr, gang.ReasonClassNotHonoured, why)
	}
	if err := pr.Validate(); err != nil {
		return nil, true, a.ReportNotHonoured(ctx, pr, gang.ReasonInvalid, err.Error())
	}
	until, err := gang.ValidUntil(pr)
	if err != nil {
		return nil, true, a.ReportNotHonoured(ctx, pr, gang.ReasonInvalid, err.Error())
	}
	if !until.IsZero() && !time.Now().Before(until) {
		msg := fmt.Sprintf("not provisioned before %s (%s=%s): no further try", until.UTC().Format(time.RFC3339),
			gang.ParamValidUntilSeconds, pr.Spec.Parameters[gang.ParamValidUntilSeconds])
		st := provreq.Status{Conditions: gang.Conditions(pr.Status.Conditions, gang.OutcomeGaveUp, gang.ReasonValidUntil, msg, pr.Generation, time.Now()),
			ProvisioningClassDetails: pr.Status.ProvisioningClassDetails}
		log.Warn("provisioning request failed", zap.String("reason", msg))
		if a.cluster.Recorder != nil {
			a.cluster.Recorder.Event(requestRef(pr), corev1.EventTypeWarning, gang.ReasonValidUntil, msg)
		}
		return nil, true, a.cluster.PatchProvisioningRequestStatus(ctx, pr.Namespace, pr.Name, st)
	}
	if _, err := gang.Placement(pr); err != nil {
		return nil, true, a.ReportNotHonoured(ctx, pr, gang.ReasonInvalid, err.Error())
	}
	return pr, false, nil
}

// gangPods are the request's pods, made from its PodTemplates as Cluster
// Autoscaler makes them (count copies of each template, in the request's
// namespace). why says which template is missing.
func (a *Gang) gangPods(ctx context.Context, pr *provreq.ProvisioningRequest) (pods []*corev1.Pod, why string, err error) {
	for i, set := range pr.Spec.PodSets {
		t, err := a.cluster.PodTemplate(ctx, pr.Namespace, set.PodTemplateRef.Name)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("spec.podSets[%d].podTemplateRef: PodTemplate %s/%s not found", i, pr.Namespace, set.PodTemplateRef.Name), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("read PodTemplate %s/%s: %w", pr.Namespace, set.PodTemplateRef.Name, err)
		}
		for j := 0; j < int(set.Count); j++ {
			p := &corev1.Pod{ObjectMeta: *t.Template.ObjectMeta.DeepCopy(), Spec: *t.Template.Spec.DeepCopy()}
			p.Namespace = pr.Namespace
			p.Name = fmt.Sprintf("%s-%d-%d", pr.Name, i, j)
			p.UID = types.UID(fmt.Sprintf("%s-%d-%d", pr.UID, i, j))
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[provreq.AnnotationConsume] = pr.Name
			pods = append(pods, p)
		}
	}
	return pods, "", nil
}

// WaitGangReady returns once every NodeClaim of the gang is initialized
// (its Node registered, Ready, startup taints gone), heartbeating; the
// workflow bounds it with the deadline and watches the sagas for failures.
func (a *Gang) WaitGangReady(ctx context.Context, w workflows.GangWait) error {
	for {
		ready := 0
		for _, nc := range a.cluster.NodeClaims() {
			for _, n := range w.NodeClaims {
				if nc.Name == n && disruption.Initialized(nc) {
					ready++
				}
			}
		}
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, ready)
		}
		if ready == len(w.NodeClaims) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// BookGang marks the gang's NodeClaims booked until the booking's end.
func (a *Gang) BookGang(ctx context.Context, b workflows.GangBooking) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationBookedUntil, b.Until)
	for _, n := range b.NodeClaims {
		if err := a.cluster.PatchNodeClaim(ctx, n, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("book NodeClaim %s: %w", n, err)
		}
	}
	return nil
}

// SetGangStatus records a try's step on the request: its conditions
// (gang.Conditions), details (try, next try, NodeClaims), an Event on
// the request and on each pod consuming it, a log line and the try metric.
func (a *Gang) SetGangStatus(ctx context.Context, u workflows.GangStatusUpdate) error {
	pr, err := a.cluster.ProvisioningRequest(u.Namespace, u.Name)
	if err != nil || pr == nil || string(pr.UID) != u.UID {
		return err
	}
	now := time.Now()
	st := provreq.Status{Conditions: gang.Conditions(pr.Status.Conditions, gang.Outcome(u.Outcome), u.Reason, u.Message, pr.Generation, now),
		ProvisioningClassDetails: maps.Clone(pr.Status.ProvisioningClassDetails)}
	if st.ProvisioningClassDetails == nil {
		st.ProvisioningClassDetails = map[string]string{}
	}
	st.ProvisioningClassDetails[provreq.DetailTry] = strconv.Itoa(u.Try)
	delete(st.ProvisioningClassDetails, provreq.DetailNextTry)
	switch u.Outcome {
	case workflows.GangFailed, workflows.GangUnplaced:
		st.ProvisioningClassDetails[provreq.DetailNextTry] = u.NextTry
	case workflows.GangProvisioned:
		st.ProvisioningClassDetails[provreq.DetailBookedTill] = u.NextTry
		st.ProvisioningClassDetails[provreq.DetailNodeClaims] = strings.Join(u.Nodes, ",")
	}
	if err := a.cluster.PatchProvisioningRequestStatus(ctx, u.Namespace, u.Name, st); err != nil {
		return fmt.Errorf("status of ProvisioningRequest %s/%s: %w", u.Namespace, u.Name, err)
	}
	typ, reason := corev1.EventTypeNormal, ""
	switch u.Outcome {
	case workflows.GangFailed, workflows.GangUnplaced:
		typ, reason = corev1.EventTypeWarning, "ProvisioningFailed"
		a.metrics.GangTry(u.Outcome, u.Reason, len(u.Nodes))
	case workflows.GangProvisioned:
		reason = "Provisioned"
		a.metrics.GangTry(u.Outcome, gang.ReasonProvisioned, len(u.Nodes))
	case workflows.GangExpired:
		reason = "BookingExpired"
	case workflows.GangLaunching:
		reason = "Provisioning"
	}
	log := activityLogger(ctx, a.log).With(zap.String("provisioningrequest", u.Namespace+"/"+u.Name), zap.Int("try", u.Try),
		zap.String("outcome", u.Outcome), zap.String("message", u.Message))
	if typ == corev1.EventTypeWarning {
		log.Warn("gang try failed", zap.String("reason", u.Reason), zap.Strings("offerings", u.Offerings))
	} else {
		log.Info("gang try")
	}
	if reason == "" || a.cluster.Recorder == nil {
		return nil
	}
	a.cluster.Recorder.Event(requestRef(pr), typ, reason, u.Message)
	for _, p := range a.cluster.ConsumingPods(u.Namespace, u.Name) {
		if p.Spec.NodeName == "" {
			a.cluster.Recorder.Event(p, typ, reason, "ProvisioningRequest "+u.Name+": "+u.Message)
		}
	}
	return nil
}

// ReportNotHonoured says, on a request Joinery will not provision
// (Accepted=False with the reason, a Warning Event on it and its pods, an
// error log), why.
func (a *Gang) ReportNotHonoured(ctx context.Context, pr *provreq.ProvisioningRequest, reason, why string) error {
	if c := pr.Condition(provreq.Accepted); c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == why {
		return nil // said already
	}
	st := provreq.Status{Conditions: gang.Conditions(pr.Status.Conditions, gang.OutcomeNotHonoured, reason, why, pr.Generation, time.Now()),
		ProvisioningClassDetails: pr.Status.ProvisioningClassDetails}
	if err := a.cluster.PatchProvisioningRequestStatus(ctx, pr.Namespace, pr.Name, st); err != nil {
		return fmt.Errorf("status of ProvisioningRequest %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	activityLogger(ctx, a.log).Error("provisioning request not honoured", zap.String("provisioningrequest", pr.Namespace+"/"+pr.Name),
		zap.String("class", pr.Spec.ProvisioningClassName), zap.String("reason", why))
	if a.cluster.Recorder != nil {
		a.cluster.Recorder.Event(requestRef(pr), corev1.EventTypeWarning, reason, why)
		for _, p := range a.cluster.ConsumingPods(pr.Namespace, pr.Name) {
			a.cluster.Recorder.Event(p, corev1.EventTypeWarning, reason, "ProvisioningRequest "+pr.Name+": "+why)
		}
	}
	return nil
}

func requestRef(pr *provreq.ProvisioningRequest) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: provreq.ProvisioningRequestGVR.GroupVersion().String(), Kind: "ProvisioningRequest",
		Namespace: pr.Namespace, Name: pr.Name, UID: pr.UID, ResourceVersion: pr.ResourceVersion}
}
