package controller

import (
	"context"
	"errors"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/gc"
	"github.com/joinery/joinery/policy/repair"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultRepairInterval is how often the repair watcher judges the nodes;
// DefaultStatusCheckInterval how often it asks EC2 for failing status
// checks (Karpenter's status controller polls every minute).
const (
	DefaultRepairInterval      = 10 * time.Second
	DefaultStatusCheckInterval = time.Minute
)

// repairWatcher starts a Repair saga (repair/<node>) for each node of
// Joinery's whose health signals are past their toleration, as far as
// each NodePool's cap allows (policy/repair), and records
// NodeRepairBlocked for the nodes the cap holds back. Only the leader
// runs it; the nodes already being repaired are read from the cluster
// (the disrupted taint with reason Unhealthy), so a new leader counts
// them too.
type repairWatcher struct {
	cl        *kube.Cluster
	tc        client.Client
	log       *zap.Logger
	pseudonym func(string) string // nil: node names in clear
	policies  []repair.Policy
	every     time.Duration
	now       func() time.Time
	// impaired lists the instances whose EC2 status check fails, asked
	// every statusEvery; the last answer is kept in between.
	impaired     func(context.Context) ([]aws.ImpairedInstance, error)
	statusEvery  time.Duration
	statusAt     time.Time
	statusSince  map[string]repair.Signal // by instance id
	unauthorized bool                     // DescribeInstanceStatus refused (logged once)

	blocked map[string]bool   // nodes whose NodeRepairBlocked was recorded
	badPool map[string]string // pools whose annotations were reported bad, with the value
}

func newRepairWatcher(cl *kube.Cluster, tc client.Client, impaired func(context.Context) ([]aws.ImpairedInstance, error),
	pseudonym func(string) string, cfg Config, log *zap.Logger) *repairWatcher {
	every, statusEvery := cfg.RepairInterval, DefaultStatusCheckInterval
	if every <= 0 {
		every = DefaultRepairInterval
	}
	if every < statusEvery && cfg.RepairInterval > 0 {
		statusEvery = every // tests: as often as the nodes are judged
	}
	return &repairWatcher{cl: cl, tc: tc, log: log.Named("repair"), pseudonym: pseudonym, impaired: impaired, statusEvery: statusEvery,
		policies: repair.Scaled(repair.DefaultPolicies(), cfg.RepairTolerationScale), every: every, now: time.Now,
		blocked: map[string]bool{}, badPool: map[string]string{}}
}

// run judges the nodes every interval until ctx ends.
func (r *repairWatcher) run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		r.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass is one judgement of every node.
func (r *repairWatcher) pass(ctx context.Context) {
	defaults := repair.Settings{MaxUnhealthy: repair.DefaultMaxUnhealthy, Policies: r.policies}
	pools := map[string]*apiv1.NodePool{}
	settings := map[string]repair.Settings{}
	nps, _ := r.cl.NodePools()
	for _, np := range nps {
		pools[np.Name] = np
		settings[np.Name] = r.poolSettings(np, defaults)
	}
	r.pollStatusChecks(ctx)
	d := repair.Decide(r.nodes(), settings, defaults, r.now())
	for _, rp := range d.Repair {
		if err := r.start(ctx, rp); err != nil && ctx.Err() == nil {
			r.log.Warn("repair not started; retrying at the next pass", zap.String("node", rp.Node), zap.Error(err))
		}
	}
	still := map[string]bool{}
	for _, b := range d.Blocked {
		still[b.Node] = true
		if !r.blocked[b.Node] {
			r.recordBlocked(b, pools[b.NodePool])
		}
	}
	r.blocked = still
}

// poolSettings reads the pool's annotations; a bad value is reported once
// (Warning Event on the NodePool, a log) and the defaults apply.
func (r *repairWatcher) poolSettings(np *apiv1.NodePool, defaults repair.Settings) repair.Settings {
	s, err := repair.PoolSettings(np.Annotations, r.policies)
	if err == nil {
		delete(r.badPool, np.Name)
		return s
	}
	key := np.Annotations[repair.AnnotationMaxUnhealthy] + "|" + np.Annotations[repair.AnnotationTolerations]
	if r.badPool[np.Name] != key {
		r.badPool[np.Name] = key
		r.log.Warn("NodePool repair annotations ignored", zap.String("nodepool", np.Name), zap.Error(err))
		r.cl.Recorder.Event(nodePoolRef(np), corev1.EventTypeWarning, "InvalidRepairSettings", err.Error()+"; the defaults apply")
	}
	return defaults
}

// nodes are Joinery's nodes (those with a NodeClaim) with their signals.
func (r *repairWatcher) nodes() []repair.Node {
	list, err := r.cl.Nodes.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []repair.Node
	for _, n := range list {
		claim := r.cl.NodeClaimOfNode(n.Name)
		if claim == "" || n.DeletionTimestamp != nil {
			continue
		}
		rn := repair.Node{Name: n.Name, NodePool: n.Labels[apiv1.LabelNodePool], Repairing: r.repairing(n, claim),
			DoNotRepair: r.doNotRepair(n, claim)}
		for _, c := range n.Status.Conditions {
			rn.Signals = append(rn.Signals, repair.Signal{Type: string(c.Type), Status: string(c.Status), Since: c.LastTransitionTime.Time,
				Reason: c.Reason, Message: c.Message})
		}
		if s, ok := r.statusSince[gc.InstanceID(n.Spec.ProviderID)]; ok {
			rn.Signals = append(rn.Signals, s)
		}
		out = append(out, rn)
	}
	return out
}

// pollStatusChecks asks EC2 for the instances whose status check fails,
// at most every statusEvery. A refusal (the policy lacks
// ec2:DescribeInstanceStatus) is logged once and the check skipped, as
// Karpenter does; other errors keep the last answer.
func (r *repairWatcher) pollStatusChecks(ctx context.Context) {
	if r.impaired == nil || r.now().Sub(r.statusAt) < r.statusEvery {
		return
	}
	r.statusAt = r.now()
	list, err := r.impaired(ctx)
	if aws.IsUnauthorized(err) {
		if !r.unauthorized {
			r.log.Warn("EC2 status checks not read: DescribeInstanceStatus refused; repair acts on node conditions only", zap.Error(err))
		}
		r.unauthorized, r.statusSince = true, nil
		return
	}
	if err != nil {
		r.log.Warn("EC2 status checks not read; keeping the last answer", zap.Error(err))
		return
	}
	r.unauthorized = false
	r.statusSince = map[string]repair.Signal{}
	for _, in := range list {
		s, ok := r.statusSince[in.ID]
		if !ok || in.Since.Before(s.Since) {
			r.statusSince[in.ID] = repair.Signal{Type: repair.SignalInstanceStatus, Status: repair.StatusImpaired, Since: in.Since,
				Reason: statusReason(in.Check), Message: "EC2 " + in.Check + " status check: reachability failed"}
		}
	}
}

func statusReason(check string) string {
	if check == "system" {
		return "SystemStatusImpaired"
	}
	return "InstanceStatusImpaired"
}

// doNotRepair: the Node or its NodeClaim is annotated
// karpenter.sh/do-not-repair: "true".
func (r *repairWatcher) doNotRepair(n *corev1.Node, claim string) bool {
	if n.Annotations[apiv1.AnnotationDoNotRepair] == "true" {
		return true
	}
	nc := r.cl.CachedNodeClaim(claim)
	return nc != nil && nc.Annotations[apiv1.AnnotationDoNotRepair] == "true"
}

// repairing: the node carries the disrupted taint for reason Unhealthy.
func (r *repairWatcher) repairing(n *corev1.Node, claim string) bool {
	if !disruption.HasTaint(n.Spec.Taints, apiv1.TaintKeyDisrupted) {
		return false
	}
	nc := r.cl.CachedNodeClaim(claim)
	if nc == nil {
		return false
	}
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionDisruptionReason && c.Status == metav1.ConditionTrue && c.Reason == "Unhealthy" {
			return true
		}
	}
	return false
}

// start starts repair/<node> (nothing when it runs already).
func (r *repairWatcher) start(ctx context.Context, rp repair.Repair) error {
	ref, private := rp.Node, r.pseudonym != nil
	if private {
		ref = r.pseudonym(rp.Node)
	}
	in := workflows.RepairInput{NodeName: rp.Node, Condition: rp.Signal.Type, Status: rp.Signal.Status, Since: rp.Signal.Since,
		Toleration: rp.Policy.Toleration, Message: signalMessage(rp.Signal), Unreachable: rp.Unreachable, Private: private}
	_, err := r.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.RepairWorkflowID(ref), TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.RepairWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return err
	}
	r.log.Info("repairing unhealthy node", zap.String("node", rp.Node), zap.String("nodepool", rp.NodePool),
		zap.String("signal", rp.Signal.Type+"="+rp.Signal.Status), zap.Time("since", rp.Signal.Since),
		zap.Duration("toleration", rp.Policy.Toleration), zap.Bool("unreachable", rp.Unreachable))
	return nil
}

func signalMessage(s repair.Signal) string {
	switch {
	case s.Reason != "" && s.Message != "":
		return s.Reason + ": " + s.Message
	case s.Reason != "":
		return s.Reason
	}
	return s.Message
}

// recordBlocked records NodeRepairBlocked on the Node and its NodePool,
// as Karpenter does.
func (r *repairWatcher) recordBlocked(b repair.Blocked, np *apiv1.NodePool) {
	r.log.Warn("node repair blocked", zap.String("node", b.Node), zap.String("nodepool", b.NodePool), zap.String("why", b.Message))
	r.cl.Recorder.Event(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: b.Node, UID: types.UID(b.Node)},
		corev1.EventTypeWarning, workflows.EventNodeRepairBlocked, b.Message)
	if np != nil {
		r.cl.Recorder.Event(nodePoolRef(np), corev1.EventTypeWarning, workflows.EventNodeRepairBlocked, b.Message)
	}
}

func nodePoolRef(np *apiv1.NodePool) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: np.Name, UID: np.UID}
}
