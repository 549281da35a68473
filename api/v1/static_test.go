package v1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func staticPool(n int64) *NodePool {
	np := validPool()
	np.Spec.Weight = nil
	np.Spec.Replicas = &n
	return np
}

func TestStaticNodePoolValidation(t *testing.T) {
	if errs := staticPool(3).Validate(); len(errs) != 0 {
		t.Fatalf("static pool of 3 refused: %v", errs)
	}
	ok := staticPool(0)
	ok.Spec.Limits = corev1.ResourceList{"nodes": resource.MustParse("5")}
	if errs := ok.Validate(); len(errs) != 0 {
		t.Fatalf("static pool with limits.nodes refused: %v", errs)
	}
	cases := []struct {
		name   string
		mutate func(*NodePool)
		want   string
	}{
		{"negative", func(np *NodePool) { r := int64(-1); np.Spec.Replicas = &r }, `spec.replicas: Invalid value: -1: must not be negative`},
		{"weight", func(np *NodePool) { w := int32(5); np.Spec.Weight = &w }, `spec.weight: Forbidden: 'weight' is not supported on static NodePools`},
		{"cpu limit", func(np *NodePool) {
			np.Spec.Limits = corev1.ResourceList{"nodes": resource.MustParse("5"), corev1.ResourceCPU: resource.MustParse("10")}
		}, `spec.limits[cpu]: Forbidden: only 'limits.nodes' is supported on static NodePools`},
	}
	for _, c := range cases {
		np := staticPool(3)
		c.mutate(np)
		errs := np.Validate()
		if len(errs) != 1 || !strings.Contains(errs.ToAggregate().Error(), c.want) {
			t.Errorf("%s: got %v, want one error containing %q", c.name, errs, c.want)
		}
	}
	if !staticPool(0).IsStatic() || validPool().IsStatic() {
		t.Error("IsStatic")
	}
}

func TestStaticNodePoolTransition(t *testing.T) {
	dyn, st := validPool(), staticPool(3)
	for _, c := range []struct {
		old, new *NodePool
		bad      bool
	}{{dyn, st, true}, {st, dyn, true}, {st, staticPool(5), false}, {dyn, validPool(), false}} {
		errs := ValidateNodePoolUpdate(c.old, c.new)
		if c.bad != (len(errs) == 1) {
			t.Errorf("%v -> %v: %v", c.old.Spec.Replicas, c.new.Spec.Replicas, errs)
		}
		if c.bad && !strings.Contains(errs.ToAggregate().Error(), "spec.replicas: Invalid value") {
			t.Errorf("error %v does not name spec.replicas", errs)
		}
	}
}
