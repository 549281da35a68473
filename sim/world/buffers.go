package world

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// WaitBuffersHeld waits until every CapacityBuffer among objs has its
// virtual pods on capacity (Provisioning=True) or is refused
// (ReadyForProvisioning=False), and returns one line per buffer saying
// which: with the buffers held, the nodes bought for them are settled too.
func WaitBuffersHeld(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) ([]string, error) {
	var out []string
	for _, o := range objs {
		if o.GetKind() != "CapacityBuffer" {
			continue
		}
		ns, name := o.GetNamespace(), o.GetName()
		if ns == "" {
			ns = "default"
		}
		for {
			line, done := bufferState(ctx, dyn, ns, name)
			if done {
				out = append(out, line)
				break
			}
			select {
			case <-ctx.Done():
				return out, fmt.Errorf("CapacityBuffer %s/%s not held: %s", ns, name, line)
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return out, nil
}

// bufferState describes one buffer's conditions; done when they settle it.
func bufferState(ctx context.Context, dyn dynamic.Interface, ns, name string) (string, bool) {
	u, err := dyn.Resource(capacitybuffer.CapacityBufferGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error(), false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var cs []metav1.Condition
	for _, c := range conds {
		m, _ := c.(map[string]interface{})
		s := func(k string) string { v, _ := m[k].(string); return v }
		cs = append(cs, metav1.Condition{Type: s("type"), Status: metav1.ConditionStatus(s("status")), Reason: s("reason"), Message: s("message")})
	}
	id := "CapacityBuffer " + ns + "/" + name
	if c := meta.FindStatusCondition(cs, capacitybuffer.ConditionReadyForProvisioning); c != nil && c.Status == metav1.ConditionFalse {
		return fmt.Sprintf("%s not honoured: %s: %s", id, c.Reason, c.Message), true
	}
	c := meta.FindStatusCondition(cs, capacitybuffer.ConditionProvisioning)
	if c == nil {
		return "no Provisioning condition yet", false
	}
	line := fmt.Sprintf("%s: %s (%s)", id, strings.TrimSuffix(c.Message, "."), c.Reason)
	return line, c.Status == metav1.ConditionTrue
}
