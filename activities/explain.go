package activities

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// How long an Event is not repeated for the same object and reason, even
// when its message changes (the pods a PDB holds come and go), as
// Karpenter dedupes by object; its timeouts: 2 minutes by default, 15 for
// Unconsolidatable, 1 for a NodePool's budget. The consolidation status
// always carries the current message.
const (
	dedupeBlocked          = 2 * time.Minute
	dedupeUnconsolidatable = 15 * time.Minute
	dedupeNodePoolBudget   = time.Minute
	dedupeInvalidDND       = 2 * time.Minute
)

// Event reasons on pods and NodePools about disruption (Karpenter's).
const (
	eventInvalidDoNotDisrupt = "InvalidDoNotDisruptAnnotation"
)

// events publishes Kubernetes Events through the Cluster's recorder (none
// when it has none: a preview), and remembers those published recently,
// so a pass that runs often does not publish the same Event each time:
// one per key per TTL (first).
type events struct {
	cluster *kube.Cluster
	log     *zap.Logger

	mu        sync.Mutex
	until     map[string]time.Time
	lastPurge time.Time
}

// first reports whether key was not published within its TTL, and
// records it until now+ttl.
func (e *events) first(key string, ttl time.Duration, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.until == nil {
		e.until = map[string]time.Time{}
	}
	if now.Sub(e.lastPurge) > time.Minute {
		for k, t := range e.until {
			if !now.Before(t) {
				delete(e.until, k)
			}
		}
		e.lastPurge = now
	}
	if t, ok := e.until[key]; ok && now.Before(t) {
		return false
	}
	e.until[key] = now.Add(ttl)
	return true
}

// event publishes a Normal Event.
func (e *events) event(ref *corev1.ObjectReference, reason, msg string) {
	if e.cluster.Recorder != nil {
		e.cluster.Recorder.Event(ref, corev1.EventTypeNormal, reason, msg)
	}
}

// podProtection is disruption.PodProtection for a pod at now; an invalid
// value is reported on the pod (deduplicated) and ignored.
func (e *events) podProtection(ctx context.Context, p *corev1.Pod, now time.Time) disruption.Protection {
	var started *time.Time
	if p.Status.StartTime != nil {
		started = &p.Status.StartTime.Time
	}
	pr := disruption.PodProtection(p.Annotations, started, now)
	if pr.Invalid != nil && e.cluster.Recorder != nil &&
		e.first("pod/"+string(p.UID)+"/"+pr.Invalid.Error(), dedupeInvalidDND, time.Now()) {
		e.cluster.Recorder.Eventf(p, corev1.EventTypeWarning, eventInvalidDoNotDisrupt,
			"Invalid %s annotation: %v, ignoring annotation", apiv1.AnnotationDoNotDisrupt, pr.Invalid)
		activityLogger(ctx, e.log).Warn("invalid do-not-disrupt annotation ignored", zap.String("pod", key(p)), zap.Error(pr.Invalid))
	}
	return pr
}

// disruptionClaims reads every NodeClaim's node, pool, class, price and
// pods from the caches for candidate filtering, do-not-disrupt judged at
// now. A pod whose do-not-disrupt value is invalid gets the Warning Event
// InvalidDoNotDisruptAnnotation (the annotation is ignored, as Karpenter
// does).
func (a *Disruption) disruptionClaims(ctx context.Context, now time.Time) []disruption.Claim {
	pdbs, _ := a.cluster.PDBs.List(labels.Everything())
	claims := a.cluster.NodeClaims()
	in := make([]disruption.Claim, 0, len(claims))
	byClass := map[string]disruption.Offered{} // one ClassOfferings per class a pass
	offered := func(cls *apiv1.EC2NodeClass) disruption.Offered {
		o, ok := byClass[cls.Name]
		if !ok {
			o = disruption.ClassOfferings(cls, a.market)
			byClass[cls.Name] = o
		}
		return o
	}
	for _, nc := range claims {
		s := disruption.Claim{Claim: nc, Nominating: a.nominations.Live(nc, time.Now()), Booked: bookedFor(nc, now)}
		if nc.Status.NodeName != "" {
			if node, err := a.cluster.Nodes.Get(nc.Status.NodeName); err == nil {
				s.Node, s.Price = node, a.prices.Node(node)
			}
		}
		if s.Node != nil {
			s.Pool = a.pools.nodePool(nc.Labels[apiv1.LabelNodePool])
		}
		if s.Pool != nil {
			if ref := s.Pool.Spec.Template.Spec.NodeClassRef; ref != nil {
				if cls, err := a.cluster.NodeClass(ref.Name); err == nil {
					s.Class = cls
					s.Offered = offered(cls)
				}
			}
			for _, p := range a.cluster.PodsOnNode(s.Node.Name) {
				s.Pods = append(s.Pods, a.disruptionPod(ctx, p, pdbs, now))
			}
		}
		in = append(in, s)
	}
	return in
}

// disruptionPod is what the disruption rules know of a pod on a node,
// do-not-disrupt judged at now and the PDBs that block its eviction among
// pdbs.
func (a *Disruption) disruptionPod(ctx context.Context, p *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget, now time.Time) disruption.Pod {
	pr := a.events.podProtection(ctx, p, now)
	blocked, names := disruption.PDBBlocking(pdbs, p)
	return disruption.Pod{
		Name: key(p), Active: kube.IsActive(p), DoNotDisrupt: pr.Active, DoNotDisruptUntil: pr.Until,
		Reschedulable: reschedulable(p), Controlled: hasController(p), Blocked: blocked, PDBs: names,
		Annotations: p.Annotations, Priority: p.Spec.Priority,
	}
}

// reportBlocked publishes why nodes were not disrupted this pass: the
// Events DisruptionBlocked / Unconsolidatable on each Node and NodeClaim
// (deduplicated by object, reason and message: Karpenter's dedupe
// timeouts), DisruptionBlocked on a NodePool whose budget blocks (as
// Karpenter), a log line per published Event and one when the counts
// change, joinery_disruption_blocked_nodes{reason}, and the bounded report
// in the decision for the Consolidation workflow's status.
func (a *Disruption) reportBlocked(ctx context.Context, d *saga.DisruptionDecision, claims []disruption.Claim, blocked []disruption.Blocked) {
	now := time.Now()
	uid := map[string]types.UID{}
	for _, c := range claims {
		uid[c.Claim.Name] = c.Claim.UID
	}
	log := activityLogger(ctx, a.log)
	budgetPools := map[string]string{}
	for _, b := range blocked {
		for _, x := range b.Blocks {
			ev := x.Kind.Event()
			if ev == "" {
				continue
			}
			ttl := dedupeBlocked
			if ev == disruption.EventUnconsolidatable {
				ttl = dedupeUnconsolidatable
			}
			if x.Kind == disruption.BlockBudget && b.NodePool != "" {
				budgetPools[b.NodePool] = x.BudgetReason
			}
			published := false
			if b.Node != "" && a.events.first("node/"+b.Node+"/"+ev+"/"+string(x.Kind), ttl, now) {
				a.events.event(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: b.Node, UID: types.UID(b.Node)}, ev, x.Message)
				published = true
			}
			if a.events.first("nodeclaim/"+b.NodeClaim+"/"+ev+"/"+string(x.Kind), ttl, now) {
				a.events.event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: b.NodeClaim, UID: uid[b.NodeClaim]}, ev, x.Message)
				published = true
			}
			if published {
				log.Info("disruption blocked", zap.String("node", b.Node), zap.String("nodeclaim", b.NodeClaim), zap.String("nodepool", b.NodePool),
					zap.String("event", ev), zap.String("reason", string(x.Kind)), zap.String("message", x.Message))
			}
		}
	}
	for pool, reason := range budgetPools {
		msg := fmt.Sprintf("No allowed disruptions for disruption reason %s due to blocking budget", reason)
		if a.events.first("nodepool/"+pool+"/"+msg, dedupeNodePoolBudget, now) {
			a.events.event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: pool}, disruption.EventDisruptionBlocked, msg)
		}
	}
	rep := disruption.Report(blocked, saga.MaxBlockedReported)
	d.Blocked = &rep
	a.metrics.SetDisruptionBlocked(rep.ByReason, blockKinds())
	a.blockedMu.Lock()
	changed := !maps.Equal(a.blocked, rep.ByReason)
	a.blocked = rep.ByReason
	a.blockedMu.Unlock()
	if changed {
		fields := []zap.Field{zap.Int("nodes", rep.Total), zap.String("why", d.Why)}
		for _, k := range blockKinds() {
			if n := rep.ByReason[k]; n > 0 {
				fields = append(fields, zap.Int(k, n))
			}
		}
		log.Info("nodes not disrupted, by reason", fields...)
	}
}

func blockKinds() []string {
	out := make([]string, len(disruption.BlockKinds))
	for i, k := range disruption.BlockKinds {
		out[i] = string(k)
	}
	return out
}
