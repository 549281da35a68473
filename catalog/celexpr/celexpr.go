// Package celexpr evaluates the CEL expressions Karpenter v1.15 allows
// in EC2NodeClass spec.kubelet (maxPods, kubeReserved and systemReserved
// values, behind the NodeClassCEL feature gate), once per instance type.
// Variables: vcpus, memory_mib, default_enis, ips_per_eni, max_pods (the
// type's default pod count) and instance_type; functions min and max on
// ints and doubles. An expression returns an int or a double (truncated).
package celexpr

import (
	"fmt"
	"math"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Vars are the values an expression sees for one instance type.
type Vars struct {
	VCPUs, MemoryMiB, DefaultENIs, IPsPerENI, MaxPods int64
	InstanceType                                      string
}

func (v Vars) activation() map[string]any {
	return map[string]any{"vcpus": v.VCPUs, "memory_mib": v.MemoryMiB, "default_enis": v.DefaultENIs,
		"ips_per_eni": v.IPsPerENI, "max_pods": v.MaxPods, "instance_type": v.InstanceType}
}

// IsExpression reports whether a kubeReserved or systemReserved value is
// an expression: anything that is not a quantity (as Karpenter tells them
// apart).
func IsExpression(value string) bool {
	_, err := resource.ParseQuantity(value)
	return err != nil
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
	// compiled caches programs by expression: a class's few expressions
	// are evaluated for every instance type of every plan.
	compiled sync.Map // string -> cel.Program
)

func environment() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := []cel.EnvOption{}
		for _, name := range []string{"vcpus", "memory_mib", "default_enis", "ips_per_eni", "max_pods"} {
			opts = append(opts, cel.Variable(name, cel.IntType))
		}
		opts = append(opts, cel.Variable("instance_type", cel.StringType),
			cel.Function("min", pick("min", func(a, b float64) bool { return a < b })...),
			cel.Function("max", pick("max", func(a, b float64) bool { return a > b })...))
		env, envErr = cel.NewEnv(opts...)
	})
	return env, envErr
}

// pick is the overloads of a two-argument min or max over ints and
// doubles: int with int stays an int, any double makes a double.
func pick(name string, first func(a, b float64) bool) []cel.FunctionOpt {
	num := func(v ref.Val) float64 {
		if i, ok := v.(types.Int); ok {
			return float64(i)
		}
		return float64(v.(types.Double))
	}
	choose := func(l, r ref.Val) ref.Val {
		if first(num(l), num(r)) || num(l) == num(r) {
			return l
		}
		return r
	}
	asDouble := func(l, r ref.Val) ref.Val { return types.Double(num(choose(l, r))) }
	i, d := cel.IntType, cel.DoubleType
	return []cel.FunctionOpt{
		cel.Overload(name+"_int_int", []*cel.Type{i, i}, i, cel.BinaryBinding(choose)),
		cel.Overload(name+"_double_double", []*cel.Type{d, d}, d, cel.BinaryBinding(asDouble)),
		cel.Overload(name+"_int_double", []*cel.Type{i, d}, d, cel.BinaryBinding(asDouble)),
		cel.Overload(name+"_double_int", []*cel.Type{d, i}, d, cel.BinaryBinding(asDouble)),
	}
}

// Validate compiles an expression: its syntax, variables and that it
// returns an int or a double.
func Validate(expr string) error {
	_, err := program(expr)
	return err
}

func program(expr string) (cel.Program, error) {
	if p, ok := compiled.Load(expr); ok {
		return p.(cel.Program), nil
	}
	e, err := environment()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("compiling expression %q: %w", expr, iss.Err())
	}
	if t := ast.OutputType(); t != cel.IntType && t != cel.DoubleType {
		return nil, fmt.Errorf("expression %q must return int or double, not %s", expr, t)
	}
	p, err := e.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", expr, err)
	}
	compiled.Store(expr, p)
	return p, nil
}

// Eval evaluates an expression for one instance type. A double result is
// truncated; an infinite or NaN one is an error naming the type.
func Eval(expr string, v Vars) (int64, error) {
	p, err := program(expr)
	if err != nil {
		return 0, err
	}
	out, _, err := p.Eval(v.activation())
	if err != nil {
		return 0, fmt.Errorf("evaluating %q for %s: %w", expr, v.InstanceType, err)
	}
	switch r := out.Value().(type) {
	case int64:
		return r, nil
	case float64:
		if math.IsInf(r, 0) || math.IsNaN(r) || r >= math.MaxInt64 || r <= math.MinInt64 {
			return 0, fmt.Errorf("%q evaluates to %v for %s, not a finite number", expr, r, v.InstanceType)
		}
		return int64(r), nil
	}
	return 0, fmt.Errorf("%q evaluates to a %T for %s", expr, out.Value(), v.InstanceType)
}
