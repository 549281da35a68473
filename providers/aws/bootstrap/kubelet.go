package bootstrap

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// checkFamilyKubelet refuses what the family's user data cannot carry as
// the class says: an expression not resolved for the instance type (it
// would reach the kubelet as text), and kubelet fields besides the typed
// ones on any family but AL2023, whose nodeadm config takes every
// KubeletConfiguration field (policy/nodeclass refuses such a class
// before it launches; this keeps user data honest if one gets here).
func checkFamilyKubelet(family string, k *apiv1.KubeletConfiguration) error {
	if expr := k.MaxPodsExpression(); expr != "" {
		return fmt.Errorf("spec.kubelet.maxPods: expression %q is not resolved for an instance type", expr)
	}
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"kubeReserved", k.KubeReserved}, {"systemReserved", k.SystemReserved}} {
		for _, key := range slices.Sorted(maps.Keys(f.m)) {
			if _, err := resource.ParseQuantity(f.m[key]); err != nil {
				return fmt.Errorf("spec.kubelet.%s[%s]: %q is not a quantity (an expression is resolved for an instance type first)", f.name, key, f.m[key])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(k.Other)) {
		if !slices.Contains(k.UnmanagedFields(), name) {
			return fmt.Errorf("spec.kubelet.%s: %s is not a value of the field", name, k.Other[name])
		}
	}
	if other := k.UnmanagedFields(); len(other) > 0 && family != apiv1.AMIFamilyAL2023 {
		return fmt.Errorf("spec.kubelet: the %s family does not apply %s (only AL2023's nodeadm config takes any kubelet field)", family, strings.Join(other, ", "))
	}
	return nil
}
