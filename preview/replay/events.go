package replay

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// What Joinery's disruption did in the replaying cluster is read from the
// Events it writes (component "joinery"): "Evicted" on each pod its
// drains evicted (consolidation, drift, expiry and interruption drains
// alike) and "SpotInterrupted" on each Node it drained for a spot
// interruption warning.
const (
	eventSource      = "joinery"
	reasonEvicted    = "Evicted"
	reasonSpotNotice = "SpotInterrupted"
)

// eventCounter counts each evicted pod and each interrupted node once
// across samples (an Event is updated, not repeated, when it recurs, and
// expires after the API server's event TTL, an hour by default: the
// samples come far more often).
type eventCounter struct{ seen map[string]bool }

// count lists Joinery's eviction and interruption Events and returns how
// many pods and nodes are new since the last call.
func (c *eventCounter) count(ctx context.Context, kc kubernetes.Interface) (evicted, interrupted int, err error) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	for _, reason := range []string{reasonEvicted, reasonSpotNotice} {
		list, err := kc.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0",
			FieldSelector: "source=" + eventSource + ",reason=" + reason})
		if err != nil {
			return evicted, interrupted, err
		}
		for i := range list.Items {
			switch c.fresh(&list.Items[i]) {
			case reasonEvicted:
				evicted++
			case reasonSpotNotice:
				interrupted++
			}
		}
	}
	return evicted, interrupted, nil
}

// fresh is the Event's reason when it is Joinery's, about a pod evicted or
// a Node interrupted, and not counted before; "" otherwise.
func (c *eventCounter) fresh(e *corev1.Event) string {
	if e.Source.Component != eventSource {
		return ""
	}
	kind := map[string]string{reasonEvicted: "Pod", reasonSpotNotice: "Node"}[e.Reason]
	if kind == "" || e.InvolvedObject.Kind != kind {
		return ""
	}
	id := string(e.InvolvedObject.UID)
	if id == "" {
		id = e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
	}
	key := e.Reason + "/" + id
	if c.seen[key] {
		return ""
	}
	c.seen[key] = true
	return e.Reason
}
