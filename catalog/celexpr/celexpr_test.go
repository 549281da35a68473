package celexpr

import (
	"strings"
	"testing"
)

var m5large = Vars{VCPUs: 2, MemoryMiB: 8192, DefaultENIs: 3, IPsPerENI: 10, MaxPods: 29, InstanceType: "m5.large"}

func TestEval(t *testing.T) {
	for _, c := range []struct {
		expr string
		want int64
	}{
		{"min(max_pods, 20)", 20},
		{"max(max_pods, 110)", 110},
		{"default_enis * (ips_per_eni - 1) + 2", 29},
		{"vcpus * 30", 60},
		{"memory_mib / 100", 81},
		{"double(memory_mib) * 0.011", 90},    // a double is truncated
		{"max(60, double(vcpus) * 25.5)", 60}, // int and double mix
		{"instance_type.startsWith('m5') ? 7 : 3", 7},
	} {
		got, err := Eval(c.expr, m5large)
		if err != nil || got != c.want {
			t.Errorf("%s = %d, %v; want %d", c.expr, got, err, c.want)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	for expr, want := range map[string]string{
		"gpus * 2":      "undeclared reference to 'gpus'",
		"instance_type": "must return int or double",
		"max_pods *":    "Syntax error",
		"min(1, 2, 3)":  "found no matching overload for 'min'",
		"vcpus > 2":     "must return int or double",
	} {
		if err := Validate(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want %q", expr, err, want)
		}
	}
}

func TestEvalNonFiniteNamesTheType(t *testing.T) {
	_, err := Eval("1.0 / double(vcpus - 2)", m5large)
	if err == nil || !strings.Contains(err.Error(), "m5.large") {
		t.Fatalf("err %v, want the type named", err)
	}
}

// Karpenter's units and rounding: cpu millicores up to 10m, memory MiB up
// to 16Mi, ephemeral-storage GiB, pid bare.
func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int64
		want string
	}{
		{"cpu", 60, "60m"}, {"cpu", 61, "70m"}, {"cpu", 0, "0m"},
		{"memory", 81, "96Mi"}, {"memory", 640, "640Mi"},
		{"ephemeral-storage", 3, "3Gi"}, {"pid", 1001, "1001"},
	} {
		if got := Quantity(c.name, c.n); got != c.want {
			t.Errorf("Quantity(%s, %d) = %s, want %s", c.name, c.n, got, c.want)
		}
	}
}
