package kube

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Raising a NodePool's USD/hour limit is a change of what it may launch
// (the provisioner forgets its unschedulable pods), though an annotation
// bumps no generation; other annotations and status writes are not.
func TestNodePoolSpecChangedByTheUSDLimit(t *testing.T) {
	pool := func(gen int64, ann map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGeneration(gen)
		u.SetAnnotations(ann)
		return u
	}
	limit := func(v string) map[string]string { return map[string]string{apiv1.AnnotationLimitUSDPerHour: v} }
	cases := []struct {
		name string
		o, n *unstructured.Unstructured
		want bool
	}{
		{"spec", pool(1, nil), pool(2, nil), true},
		{"limit raised", pool(1, limit("0.2")), pool(1, limit("0.4")), true},
		{"limit added", pool(1, nil), pool(1, limit("10")), true},
		{"limit removed", pool(1, limit("10")), pool(1, map[string]string{"team": "a"}), true},
		{"other annotation", pool(1, limit("10")), pool(1, map[string]string{apiv1.AnnotationLimitUSDPerHour: "10", "team": "a"}), false},
		{"status only", pool(3, limit("10")), pool(3, limit("10")), false},
	}
	for _, c := range cases {
		if got := nodePoolSpecChanged(c.o, c.n); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
