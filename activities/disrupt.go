package activities

import (
	"context"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckDisruptionCandidate re-checks, right before acting, that a node may
// be disrupted: it exists and Joinery launched it; unless this is an
// interruption, the disruption rules candidate filtering applies to the
// node and each of its pods (disruption.NodeBlock, disruption.PodBlock;
// an operator's drain may take a bare pod) and, unless skipped, its
// NodePool's budgets (disruption.BudgetBlocks) allow it.
func (a *Disruption) CheckDisruptionCandidate(ctx context.Context, in workflows.DisruptInput) (workflows.Candidate, error) {
	node, err := a.cluster.GetNode(ctx, in.NodeName)
	if apierrors.IsNotFound(err) {
		return workflows.Candidate{Why: "node " + in.NodeName + " does not exist"}, nil
	}
	if err != nil {
		return workflows.Candidate{}, err
	}
	nc := a.claimOfNode(node)
	if nc == nil {
		return workflows.Candidate{Why: "node " + in.NodeName + " has no NodeClaim: Joinery did not launch it"}, nil
	}
	c := workflows.Candidate{OK: true, NodeClaim: nc.Name, NodePool: nc.Labels[apiv1.LabelNodePool], InstanceID: gc.InstanceID(node.Spec.ProviderID)}
	if nc.Spec.TerminationGracePeriod != nil {
		c.TerminationGracePeriod = nc.Spec.TerminationGracePeriod.Duration
	}
	if in.Interruption {
		return c, nil
	}
	if b := disruption.NodeBlock(node.Annotations); b != nil {
		return workflows.Candidate{Why: b.Message}, nil
	}
	now := time.Now()
	for _, p := range a.cluster.PodsOnNode(node.Name) {
		if b := disruption.PodBlock(a.disruptionPod(ctx, p, nil, now), in.Reason == saga.ReasonManual); b != nil {
			return workflows.Candidate{Why: b.Message}, nil
		}
	}
	if np := a.pools.nodePool(c.NodePool); np != nil && !in.SkipBudgets {
		if why := disruption.BudgetBlocks(np, a.pools.nodeCount(np.Name, node.Name), in.Reason, now); why != "" {
			return workflows.Candidate{Why: why}, nil
		}
	}
	return c, nil
}

// TaintNodeDisrupted adds (or removes) the karpenter.sh/disrupted:NoSchedule
// taint and the NodeClaim's DisruptionReason condition. Idempotent.
func (a *Disruption) TaintNodeDisrupted(ctx context.Context, r workflows.TaintRequest) error {
	err := a.cluster.UpdateNode(ctx, r.NodeName, func(node *corev1.Node) bool {
		has := disruption.HasTaint(node.Spec.Taints, apiv1.TaintKeyDisrupted)
		if has != r.Remove {
			return false
		}
		if r.Remove {
			var kept []corev1.Taint
			for _, t := range node.Spec.Taints {
				if t.Key != apiv1.TaintKeyDisrupted {
					kept = append(kept, t)
				}
			}
			node.Spec.Taints = kept
		} else {
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: apiv1.TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule})
		}
		return true
	})
	if apierrors.IsNotFound(err) {
		err = nil // a node already gone needs no taint
	}
	if err != nil {
		return err
	}
	nc, err := a.cluster.NodeClaim(ctx, r.NodeClaim)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var conds []metav1.Condition
	for _, c := range nc.Status.Conditions {
		if c.Type != apiv1.ConditionDisruptionReason {
			conds = append(conds, c)
		}
	}
	if !r.Remove {
		conds = append(conds, metav1.Condition{Type: apiv1.ConditionDisruptionReason, Status: metav1.ConditionTrue, Reason: reasonWord(r.Reason),
			Message: "disrupting: " + r.Reason, LastTransitionTime: metav1.Now()})
	}
	return a.cluster.PatchNodeClaimStatus(ctx, r.NodeClaim, mustJSON(map[string]interface{}{"status": map[string]interface{}{"conditions": conds}}))
}

// reasonWord turns "underutilized" into the CamelCase a condition reason needs.
func reasonWord(r string) string {
	if r == "" {
		return "Unknown"
	}
	return strings.ToUpper(r[:1]) + r[1:]
}

// PlanReplacement plans capacity for the pods a node holds as if the node
// were gone: the solver places them on other nodes where they fit and
// plans new NodeClaims for the rest (written, with the pods nominated, as
// provisioning does). It returns the NodeClaim sagas to start.
func (a *Disruption) PlanReplacement(ctx context.Context, in workflows.DisruptInput) ([]workflows.NodeClaimInput, error) {
	log := activityLogger(ctx, a.log).With(zap.String("node", in.NodeName))
	batch, err := a.claims.discardEarlierAttempt(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := a.snapshots.take(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	var kept []solver.Node
	for _, n := range snap.input.ExistingNodes {
		if n.Name != in.NodeName {
			kept = append(kept, n)
		}
	}
	snap.input.ExistingNodes = kept
	// The capacity buffers' virtual pods on the node move with its pods
	// (the replacement keeps their room).
	for _, ep := range snap.input.ExistingPods {
		if ep.Node == in.NodeName && isVirtualUID(ep.Pod.UID) {
			snap.input.Pods = append(snap.input.Pods, ep.Pod)
		}
	}
	for _, p := range a.cluster.PodsOnNode(in.NodeName) {
		if !reschedulable(p) {
			continue
		}
		// nil: the pod's own volumes count on its new node (they detach from this one).
		snap.input.Pods = append(snap.input.Pods, snap.solverPod(p, nil))
		snap.podsByKey[p.Namespace+"/"+p.Name] = p
	}
	snap.input.Budget = a.solverBudget
	start := time.Now()
	plan := solver.Solve(snap.input)
	a.metrics.Scheduled(metrics.ControllerDisruption, time.Since(start).Seconds(), len(plan.Unschedulable))
	var out []workflows.NodeClaimInput
	for _, nn := range plan.NewNodeClaims {
		nc, nci, err := a.claims.write(ctx, snap, batch, nn)
		if err != nil {
			return out, err
		}
		out = append(out, nci)
		a.metrics.NodeClaimCreatedBy(nn.NodePool, in.Reason, nn.MinValuesRelaxed)
		log.Info("replacement planned", zap.String("nodeclaim", nc.Name), zap.Int("pods", len(nn.Pods)), zap.Float64("usdPerHour", nn.Price()))
	}
	for _, u := range plan.Unschedulable {
		if snap.virtualKeys[u.Pod] {
			continue // a buffer's: provisioning re-creates it
		}
		log.Warn("pod will have nowhere to go after the drain", zap.String("pod", u.Pod), zap.String("reason", u.Reason))
	}
	return out, nil
}

// reschedulable: a pod that must find a new home when its node goes away.
func reschedulable(p *corev1.Pod) bool {
	return kube.IsActive(p) && p.DeletionTimestamp == nil && !kube.IsDaemonSetPod(p) && !isMirror(p)
}

// hasController: something (ReplicaSet, Job, StatefulSet...) recreates the pod.
func hasController(p *corev1.Pod) bool {
	return metav1.GetControllerOf(p) != nil
}

func isMirror(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// WaitNodeClaimReady heartbeats until a NodeClaim is Initialized. A NodeClaim
// that disappears first (its launch failed, or its Node never registered)
// fails with ErrReplacementFailed.
func (a *Lifecycle) WaitNodeClaimReady(ctx context.Context, name string) (workflows.NodeReady, error) {
	for {
		activity.RecordHeartbeat(ctx)
		nc, err := a.cluster.NodeClaim(ctx, name)
		if apierrors.IsNotFound(err) {
			return workflows.NodeReady{}, temporal.NewNonRetryableApplicationError("replacement NodeClaim "+name+" was deleted before its node was Ready", workflows.ErrReplacementFailed, err)
		}
		if err == nil {
			for _, c := range nc.Status.Conditions {
				if c.Type == apiv1.ConditionInitialized && c.Status == metav1.ConditionTrue {
					return workflows.NodeReady{NodeName: nc.Status.NodeName}, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return workflows.NodeReady{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// WaitNodeClaimGone heartbeats until the NodeClaim object is deleted and its
// instance is terminated (or unknown to EC2).
func (a *Lifecycle) WaitNodeClaimGone(ctx context.Context, r workflows.TerminateRequest) error {
	for {
		activity.RecordHeartbeat(ctx)
		_, err := a.cluster.NodeClaim(ctx, r.NodeClaim)
		claimGone := apierrors.IsNotFound(err)
		instGone := true
		// The instance is asked about once the NodeClaim is gone (its
		// termination waited for the instance): one EC2 call, not one per poll.
		if claimGone && r.InstanceID != "" {
			inst, err := a.cloud.Get(ctx, r.InstanceID)
			instGone = aws.IsNotFound(err) || (err == nil && inst.State == aws.StateTerminated)
		}
		if claimGone && instGone {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// claimOfNode finds the NodeClaim of a node by status.nodeName or providerID.
func (a *Disruption) claimOfNode(node *corev1.Node) *apiv1.NodeClaim {
	for _, nc := range a.cluster.NodeClaims() {
		if nc.Status.NodeName == node.Name || (node.Spec.ProviderID != "" && nc.Status.ProviderID == node.Spec.ProviderID) {
			return nc
		}
	}
	return nil
}
