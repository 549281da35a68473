package catalog

import (
	"fmt"
	"maps"
	"math"
	"slices"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog/celexpr"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// eniPods is the ENI max-pods formula (a Windows node's one-interface
// limit), 110 when unknown.
func (it *InstanceType) eniPods() int64 {
	pods := int64(it.MaxPods)
	if it.WindowsBuild != "" {
		pods = int64(it.WindowsMaxPods())
	}
	if pods == 0 {
		pods = DefaultMaxPods
	}
	return pods
}

// defaultPods is the node's pod limit when spec.kubelet sets no maxPods:
// eniPods less the default card's efa-only interfaces; podsPerCore × vCPU
// caps it when set. It is max_pods in a kubelet expression.
func (it *InstanceType) defaultPods(l Launch) int64 {
	pods := it.eniPods()
	if n, ok := it.InterfacePods(l.NetworkInterfaces); ok && it.WindowsBuild == "" {
		// The node agent still reserves for the type's ENI count: it
		// does not know the interfaces (Joinery passes the pods in
		// user data, as Karpenter passes its max pods).
		pods = int64(n)
	}
	return it.capPerCore(l.Kubelet, pods)
}

// podsOf is the node's kubelet settings resolved for the type and its pod
// limit. An expression that fails leaves the settings unresolved (the
// type is unlaunchable for the class: Unlaunchable) and the defaults.
func (it *InstanceType) podsOf(l Launch) (*apiv1.KubeletConfiguration, int64) {
	k := l.Kubelet
	if r, err := it.ResolveKubelet(l); err == nil {
		k = r
	}
	if n, ok := k.MaxPodsCount(); ok {
		return k, it.capPerCore(k, int64(n))
	}
	return k, it.defaultPods(l)
}

// capPerCore applies spec.kubelet.podsPerCore to a pod count.
func (it *InstanceType) capPerCore(k *apiv1.KubeletConfiguration, pods int64) int64 {
	if k != nil && k.PodsPerCore != nil && *k.PodsPerCore > 0 {
		return min(pods, int64(*k.PodsPerCore)*int64(it.VCPU))
	}
	return pods
}

// celVars are the type's values in kubelet expressions; maxPods is
// max_pods (the default inside the maxPods expression itself).
func (it *InstanceType) celVars(maxPods int64) celexpr.Vars {
	return celexpr.Vars{VCPUs: int64(it.VCPU), MemoryMiB: it.MemoryMiB, DefaultENIs: int64(it.DefaultCardMaxENIs),
		IPsPerENI: int64(it.IPv4PerENI), MaxPods: maxPods, InstanceType: it.Name}
}

// HasKubeletExpressions reports whether spec.kubelet holds a CEL
// expression: a string maxPods, or a reserved value that is not a quantity.
func HasKubeletExpressions(k *apiv1.KubeletConfiguration) bool {
	if k.MaxPodsExpression() != "" {
		return true
	}
	if k == nil {
		return false
	}
	for _, m := range []map[string]string{k.KubeReserved, k.SystemReserved} {
		for _, v := range m {
			if celexpr.IsExpression(v) {
				return true
			}
		}
	}
	return false
}

// ResolveKubelet is l.Kubelet for a node of this type: a maxPods
// expression evaluated to a count, reserved expressions to quantities
// (celexpr.Quantity), as Karpenter resolves them per instance type for
// planning and for the launch template's user data alike. The
// configuration is returned as it is when it holds no expression. A
// result out of range, or an expression that fails, is an error naming
// the field and the type.
func (it *InstanceType) ResolveKubelet(l Launch) (*apiv1.KubeletConfiguration, error) {
	if !HasKubeletExpressions(l.Kubelet) {
		return l.Kubelet, nil
	}
	k := l.Kubelet.Clone()
	maxPods := it.defaultPods(l)
	if expr := k.MaxPodsExpression(); expr != "" {
		n, err := celexpr.Eval(expr, it.celVars(maxPods))
		if err != nil {
			return nil, fmt.Errorf("spec.kubelet.maxPods: %w", err)
		}
		if n < 0 || n > math.MaxInt32 {
			return nil, fmt.Errorf("spec.kubelet.maxPods: %q evaluates to %d for %s, outside [0, %d]", expr, n, it.Name, math.MaxInt32)
		}
		k.MaxPods = ptr(intstr.FromInt32(int32(n)))
	}
	if n, ok := k.MaxPodsCount(); ok {
		maxPods = it.capPerCore(k, int64(n))
	}
	var err error
	if k.KubeReserved, err = it.resolveReserved("kubeReserved", k.KubeReserved, maxPods); err != nil {
		return nil, err
	}
	if k.SystemReserved, err = it.resolveReserved("systemReserved", k.SystemReserved, maxPods); err != nil {
		return nil, err
	}
	return k, nil
}

// resolveReserved evaluates the expressions of a kubeReserved or
// systemReserved map; max_pods is the node's resolved pod count.
func (it *InstanceType) resolveReserved(field string, m map[string]string, maxPods int64) (map[string]string, error) {
	out := maps.Clone(m)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		expr := m[name]
		if !celexpr.IsExpression(expr) {
			continue
		}
		n, err := celexpr.Eval(expr, it.celVars(maxPods))
		if err != nil {
			return nil, fmt.Errorf("spec.kubelet.%s[%s]: %w", field, name, err)
		}
		if n < 0 {
			return nil, fmt.Errorf("spec.kubelet.%s[%s]: %q evaluates to %d for %s, a negative reservation", field, name, expr, n, it.Name)
		}
		out[name] = celexpr.Quantity(name, n)
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
