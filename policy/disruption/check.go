package disruption

import (
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// The rules a node is checked against again right before it is disrupted
// (the CheckCandidate activities): the same rules Filter applies, one node
// at a time.

// NodeBlock is the rule for the node's own do-not-disrupt annotation (nil:
// it does not block).
func NodeBlock(annotations map[string]string) *Block {
	if !NodeProtected(annotations) {
		return nil
	}
	return &Block{Kind: BlockDoNotDisruptNode, Message: fmt.Sprintf("Disruption is blocked through the %q annotation", apiv1.AnnotationDoNotDisrupt)}
}

// PodBlock is the rule for one pod on the node (nil: it does not block): an
// active pod protected by do-not-disrupt blocks, and so does a
// reschedulable pod without a controller unless allowBare (an operator's
// drain may evict a bare pod, like kubectl drain --force). PodDisruptionBudgets
// are left to the eviction API.
func PodBlock(p Pod, allowBare bool) *Block {
	if !p.Active {
		return nil
	}
	if p.DoNotDisrupt {
		msg := fmt.Sprintf("Pod %s has %q annotation", p.named(), apiv1.AnnotationDoNotDisrupt)
		if !p.DoNotDisruptUntil.IsZero() {
			msg += " until " + p.DoNotDisruptUntil.UTC().Format(time.RFC3339)
		}
		return &Block{Kind: BlockDoNotDisruptPod, Message: msg}
	}
	if p.Reschedulable && !p.Controlled && !allowBare {
		return &Block{Kind: BlockNoController, Message: fmt.Sprintf("Pod %s has no controller: evicting it would lose it", p.named())}
	}
	return nil
}

// BudgetBlocks says why a NodePool's budgets for the reason forbid
// disrupting one more node at now ("" if they allow it); pn counts the
// pool's nodes and those already being disrupted (the node itself left out).
func BudgetBlocks(np *apiv1.NodePool, pn PoolNodes, reason string, now time.Time) string {
	allowed, err := Allowed(np.Spec.Disruption.Budgets, BudgetReason(reason), pn.Nodes, now)
	if err != nil {
		return err.Error()
	}
	if pn.Disrupting >= allowed {
		return fmt.Sprintf("NodePool %s disruption budget allows %d node(s) at once and %d are being disrupted", np.Name, allowed, pn.Disrupting)
	}
	return ""
}

// Room is what each NodePool's budget has left while several nodes are
// checked together: NodePool name -> disruptions left.
type Room map[string]int

// Take reserves one disruption of the pool's budget for the reason at now
// and says why not when none is left. np is the NodePool (nil: gone) and pn
// its nodes, read the first time the pool is taken from.
func (r Room) Take(pool string, np *apiv1.NodePool, pn PoolNodes, reason string, now time.Time) string {
	left, ok := r[pool]
	if !ok {
		if np == nil {
			return "NodePool " + pool + " is gone"
		}
		allowed, err := Allowed(np.Spec.Disruption.Budgets, BudgetReason(reason), pn.Nodes, now)
		if err != nil {
			return err.Error()
		}
		left = allowed - pn.Disrupting
	}
	if left <= 0 {
		r[pool] = 0
		return fmt.Sprintf("NodePool %s disruption budget allows no more nodes to be disrupted at once", pool)
	}
	r[pool] = left - 1
	return ""
}

// HasTaint reports whether a taint with the key is among ts.
func HasTaint(ts []corev1.Taint, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}
