package activities

import (
	"context"
	"encoding/json"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool condition types and the reason on a skipped pool (Karpenter's
// names: kubectl get nodepools shows Ready).
const (
	ConditionValidationSucceeded = "ValidationSucceeded"
	ConditionReady               = "Ready"
	ReasonValidationFailed       = "NodePoolValidationFailed"
	// ReasonUnhealthyDependents is Ready's reason while another condition
	// is False (message "<Type>=False"), as Karpenter's status conditions.
	ReasonUnhealthyDependents = "UnhealthyDependents"
	// ConditionNodeClassReady is False while the pool's EC2NodeClass is
	// not Ready (reason ReasonNodeClassNotReady), as in Karpenter.
	ConditionNodeClassReady = "NodeClassReady"
	ReasonNodeClassNotReady = "NodeClassNotReady"
)

// report reports every NodePool skipped for failing validation
// (Warning Event InvalidNodePool, error log, joinery_nodepools_invalid
// metric) and writes the ValidationSucceeded and Ready conditions on every
// pool: False with the field and reason on a skipped pool, True on a valid
// one. Each change is written once; a failed status write is logged and
// retried at the next snapshot.
func (p *pools) report(ctx context.Context, valid []*apiv1.NodePool, bad []kube.InvalidNodePool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.invalid == nil {
		p.invalid = map[string]string{}
	}
	isBad := map[string]bool{}
	invalid := 0
	for _, b := range bad {
		isBad[b.Name] = true
		typ, reason, event := ConditionValidationSucceeded, ReasonValidationFailed, "InvalidNodePool"
		if b.NodeClassNotReady {
			typ, reason, event = ConditionNodeClassReady, ReasonNodeClassNotReady, ReasonNodeClassNotReady
		} else {
			invalid++
		}
		msg := b.Err.Error()
		if p.invalid[b.Name] == msg {
			continue
		}
		p.log.Error("NodePool skipped", zap.String("nodepool", b.Name), zap.String("reason", msg))
		p.cluster.Recorder.Event(&corev1.ObjectReference{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: b.Name},
			corev1.EventTypeWarning, event, msg)
		if p.writeConditions(ctx, b.Name, 0, typ, metav1.ConditionFalse, reason, msg) {
			p.invalid[b.Name] = msg
		}
	}
	p.metrics.SetInvalidNodePools(invalid)
	for _, np := range valid {
		if isBad[np.Name] {
			continue // valid spec, but its EC2NodeClass is missing
		}
		prev, known := p.invalid[np.Name]
		if known && prev == "" {
			continue
		}
		if !known && hasCondition(np.Status.Conditions, ConditionValidationSucceeded, metav1.ConditionTrue, np.Generation) {
			p.invalid[np.Name] = ""
			continue
		}
		if p.writeConditions(ctx, np.Name, np.Generation, ConditionValidationSucceeded, metav1.ConditionTrue, ConditionValidationSucceeded, "") {
			p.invalid[np.Name] = ""
		}
	}
}

// writeConditions merge-patches the pool's status conditions.
func (p *pools) writeConditions(ctx context.Context, name string, generation int64, typ string, status metav1.ConditionStatus, reason, msg string) bool {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	conds := []metav1.Condition{
		{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: now, ObservedGeneration: generation},
		{Type: ConditionReady, Status: status, Reason: ReasonUnhealthyDependents, Message: typ + "=False", LastTransitionTime: now, ObservedGeneration: generation},
	}
	if status == metav1.ConditionTrue {
		conds[1].Reason, conds[1].Message = ConditionReady, ""
		// A valid pool is only written once its class is Ready too.
		conds = append(conds, metav1.Condition{Type: ConditionNodeClassReady, Status: status, Reason: ConditionNodeClassReady,
			LastTransitionTime: now, ObservedGeneration: generation})
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err := p.cluster.PatchNodePoolStatus(ctx, name, patch); err != nil {
		p.log.Warn("nodepool status", zap.String("nodepool", name), zap.Error(err))
		return false
	}
	return true
}

func hasCondition(conds []metav1.Condition, typ string, status metav1.ConditionStatus, generation int64) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == status && c.ObservedGeneration == generation
		}
	}
	return false
}
