package repair

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func node(name, pool string, sigs ...Signal) Node {
	return Node{Name: name, NodePool: pool, Signals: sigs}
}

func sig(typ, status string, ago time.Duration) Signal {
	return Signal{Type: typ, Status: status, Since: t0.Add(-ago)}
}

func names(d Decision) (repair, blocked string) {
	var r, b []string
	for _, x := range d.Repair {
		n := x.Node
		if x.Unreachable {
			n += "!"
		}
		r = append(r, n)
	}
	for _, x := range d.Blocked {
		b = append(b, x.Node)
	}
	return strings.Join(r, ","), strings.Join(b, ",")
}

func TestDecide(t *testing.T) {
	def := Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: DefaultPolicies()}
	healthy := func(n int, pool string) []Node {
		var out []Node
		for i := 0; i < n; i++ {
			out = append(out, node("h"+string(rune('a'+i)), pool))
		}
		return out
	}
	one, _ := PoolSettings(map[string]string{AnnotationMaxUnhealthy: "1"}, DefaultPolicies())
	fast, _ := PoolSettings(map[string]string{AnnotationTolerations: "KernelReady=False:1m"}, DefaultPolicies())
	for _, tc := range []struct {
		name            string
		nodes           []Node
		settings        map[string]Settings
		repair, blocked string
	}{
		{"accelerated hardware after 10 min", append(healthy(4, "p"), node("gpu", "p", sig(ConditionAcceleratedHardwareReady, StatusFalse, 10*time.Minute))), nil, "gpu", ""},
		{"accelerated hardware before 10 min", append(healthy(4, "p"), node("gpu", "p", sig(ConditionAcceleratedHardwareReady, StatusFalse, 9*time.Minute))), nil, "", ""},
		{"kernel after 29 min waits", append(healthy(4, "p"), node("k", "p", sig(ConditionKernelReady, StatusFalse, 29*time.Minute))), nil, "", ""},
		{"a True condition is healthy", append(healthy(4, "p"), node("k", "p", sig(ConditionKernelReady, "True", time.Hour))), nil, "", ""},
		{"ready unknown is unreachable", append(healthy(4, "p"), node("u", "p", sig(ConditionReady, StatusUnknown, 31*time.Minute))), nil, "u!", ""},
		{"unreachable even when another signal is due", append(healthy(4, "p"), node("u", "p", sig(ConditionReady, StatusUnknown, time.Minute),
			sig(ConditionAcceleratedHardwareReady, StatusFalse, time.Hour))), nil, "u!", ""},
		{"ec2 impaired after 2 min", append(healthy(4, "p"), node("i", "p", sig(SignalInstanceStatus, StatusImpaired, 2*time.Minute))), nil, "i", ""},
		{"three of ten due, cap 20%: the two due longest", append(healthy(7, "p"),
			node("x", "p", sig(ConditionReady, StatusFalse, 40*time.Minute)),
			node("y", "p", sig(ConditionReady, StatusFalse, 50*time.Minute)),
			node("z", "p", sig(ConditionReady, StatusFalse, 35*time.Minute))), nil, "y,x", "z"},
		{"a repair under way counts against the cap", append(healthy(7, "p"),
			Node{Name: "r", NodePool: "p", Repairing: true},
			node("x", "p", sig(ConditionReady, StatusFalse, 40*time.Minute)),
			node("y", "p", sig(ConditionReady, StatusFalse, 50*time.Minute))), nil, "y", "x"},
		{"do-not-repair blocks the node and leaves its slot to the next", append(healthy(7, "p"),
			Node{Name: "y", NodePool: "p", DoNotRepair: true, Signals: []Signal{sig(ConditionReady, StatusFalse, 50*time.Minute)}},
			node("x", "p", sig(ConditionReady, StatusFalse, 40*time.Minute)),
			node("z", "p", sig(ConditionReady, StatusFalse, 35*time.Minute))), nil, "x,z", "y"},
		{"do-not-repair on a node not yet due says nothing", append(healthy(4, "p"),
			Node{Name: "y", NodePool: "p", DoNotRepair: true, Signals: []Signal{sig(ConditionReady, StatusFalse, time.Minute)}}), nil, "", ""},
		{"cap rounds up: one of three", append(healthy(2, "p"), node("x", "p", sig(ConditionReady, StatusFalse, time.Hour))), nil, "x", ""},
		{"pool annotation caps at 1", append(healthy(8, "p"),
			node("x", "p", sig(ConditionReady, StatusFalse, 40*time.Minute)),
			node("y", "p", sig(ConditionReady, StatusFalse, 50*time.Minute))), map[string]Settings{"p": one}, "y", "x"},
		{"pool annotation toleration", append(healthy(4, "p"), node("k", "p", sig(ConditionKernelReady, StatusFalse, time.Minute))), map[string]Settings{"p": fast}, "k", ""},
		{"caps are per pool", append(append(healthy(4, "a"), node("x", "a", sig(ConditionReady, StatusFalse, time.Hour))),
			append(healthy(4, "b"), node("y", "b", sig(ConditionReady, StatusFalse, time.Hour)))...), nil, "x,y", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b := names(Decide(tc.nodes, tc.settings, def, t0))
			if r != tc.repair || b != tc.blocked {
				t.Errorf("repair %q blocked %q, want %q and %q", r, b, tc.repair, tc.blocked)
			}
		})
	}
}

func TestDecideNamesTheReason(t *testing.T) {
	d := Decide([]Node{node("a", "p"), node("b", "p", sig(ConditionReady, StatusFalse, time.Hour), sig(ConditionAcceleratedHardwareReady, StatusFalse, 15*time.Minute))},
		nil, Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: DefaultPolicies()}, t0)
	if len(d.Repair) != 1 || d.Repair[0].Signal.Type != ConditionReady || d.Repair[0].Policy.Toleration != 30*time.Minute {
		t.Fatalf("got %+v, want b for Ready=False (due 30 min ago, before the accelerator's 5 min ago)", d.Repair)
	}
}

func TestPoolSettings(t *testing.T) {
	for _, tc := range []struct {
		ann     map[string]string
		cap10   int
		kernel  time.Duration
		wantErr string
	}{
		{nil, 2, 30 * time.Minute, ""},
		{map[string]string{AnnotationMaxUnhealthy: "1"}, 1, 30 * time.Minute, ""},
		{map[string]string{AnnotationMaxUnhealthy: "50%"}, 5, 30 * time.Minute, ""},
		{map[string]string{AnnotationMaxUnhealthy: "0"}, 0, 30 * time.Minute, ""},
		{map[string]string{AnnotationTolerations: " KernelReady=False:5m , Ready=Unknown:1h"}, 2, 5 * time.Minute, ""},
		{map[string]string{AnnotationMaxUnhealthy: "-1"}, 2, 30 * time.Minute, `"-1" is neither a node count`},
		{map[string]string{AnnotationMaxUnhealthy: "120%"}, 2, 30 * time.Minute, `"120%" is not a percentage`},
		{map[string]string{AnnotationMaxUnhealthy: "two"}, 2, 30 * time.Minute, "neither a node count"},
		{map[string]string{AnnotationTolerations: "KernelReady=False"}, 2, 30 * time.Minute, "is not Type=Status:duration"},
		{map[string]string{AnnotationTolerations: "KernelReady=False:soon"}, 2, 30 * time.Minute, `"soon" is not a duration`},
		{map[string]string{AnnotationTolerations: "DiskReady=False:5m"}, 2, 30 * time.Minute, `"DiskReady=False" names no repair policy`},
	} {
		s, err := PoolSettings(tc.ann, DefaultPolicies())
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one with %q", tc.ann, err, tc.wantErr)
			}
		} else if err != nil {
			t.Errorf("%v: %v", tc.ann, err)
		}
		if got := s.Cap(10); got != tc.cap10 {
			t.Errorf("%v: cap of 10 nodes %d, want %d", tc.ann, got, tc.cap10)
		}
		for _, p := range s.Policies {
			if p.Type == ConditionKernelReady && p.Toleration != tc.kernel {
				t.Errorf("%v: KernelReady toleration %s, want %s", tc.ann, p.Toleration, tc.kernel)
			}
		}
	}
	if DefaultPolicies()[4].Toleration != 30*time.Minute {
		t.Error("PoolSettings changed the default policies")
	}
}

func TestScaled(t *testing.T) {
	s := Scaled(DefaultPolicies(), 1.0/600)
	if s[2].Type != ConditionAcceleratedHardwareReady || s[2].Toleration != time.Second {
		t.Errorf("AcceleratedHardwareReady scaled to %s, want 1s", s[2].Toleration)
	}
	if DefaultPolicies()[2].Toleration != 10*time.Minute {
		t.Error("Scaled changed the defaults")
	}
}

func TestDoNotRepairSaysWhy(t *testing.T) {
	def := Settings{MaxUnhealthy: DefaultMaxUnhealthy, Policies: DefaultPolicies()}
	d := Decide([]Node{{Name: "y", NodePool: "p", DoNotRepair: true, Signals: []Signal{sig(ConditionReady, StatusFalse, time.Hour)}}},
		nil, def, t0)
	if len(d.Blocked) != 1 || d.Blocked[0].Message != `repair is blocked through the "karpenter.sh/do-not-repair" annotation` {
		t.Fatalf("blocked = %+v", d.Blocked)
	}
}
