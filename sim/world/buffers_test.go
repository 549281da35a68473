package world

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/capacitybuffer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func bufferObj(name string, conds ...map[string]interface{}) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
		"metadata": map[string]interface{}{"name": name, "namespace": "default"},
	}}
	var cs []interface{}
	for _, c := range conds {
		cs = append(cs, c)
	}
	if cs != nil {
		_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
	}
	return u
}

// A held buffer and a refused one settle, each with its line; a buffer
// without conditions yet keeps the wait going until the deadline.
func TestWaitBuffersHeld(t *testing.T) {
	held := bufferObj("held", map[string]interface{}{"type": "Provisioning", "status": "True", "reason": "CapacityProvisioned",
		"message": "10 of 10 virtual pods fit on existing capacity"})
	refused := bufferObj("refused", map[string]interface{}{"type": "ReadyForProvisioning", "status": "False", "reason": "PodTemplateNotFound",
		"message": "spec.podTemplateRef: PodTemplate missing not found"})
	waiting := bufferObj("waiting")
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{capacitybuffer.CapacityBufferGVR: "CapacityBufferList"}, held, refused, waiting)
	lines, err := WaitBuffersHeld(context.Background(), dyn, []*unstructured.Unstructured{held, refused})
	if err != nil || len(lines) != 2 {
		t.Fatalf("lines %q, err %v", lines, err)
	}
	if lines[0] != "CapacityBuffer default/held: 10 of 10 virtual pods fit on existing capacity (CapacityProvisioned)" {
		t.Errorf("held: %q", lines[0])
	}
	if !strings.Contains(lines[1], "default/refused not honoured: PodTemplateNotFound") {
		t.Errorf("refused: %q", lines[1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := WaitBuffersHeld(ctx, dyn, []*unstructured.Unstructured{waiting}); err == nil || !strings.Contains(err.Error(), "default/waiting not held") {
		t.Errorf("a buffer without conditions: err %v", err)
	}
}
