package solver

import (
	"fmt"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods that need a node each (required hostname anti-affinity to their
// own group, or hostname spread maxSkew 1) make the bound count a node per
// pod: on Input A's catalog (type i: i+1 vCPU at 0.31475·(i+1)/hour) six
// 100m pods of either kind cost at least six of the smallest node, and the
// solver's plan is exactly that.
func TestLowerBoundHostnameOnePerNode(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	for _, kind := range []string{"anti", "spread", "spread2"} {
		in := inputA(5, 1)
		in.Pods = nil
		for i := 0; i < 6; i++ {
			p := pod(fmt.Sprintf("x-%d", i), 100, 100)
			p.Labels = map[string]string{"app": "x"}
			switch kind {
			case "anti":
				p.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: sel}}}
			default:
				skew := int32(1)
				if kind == "spread2" {
					skew = 2
				}
				p.TopologySpread = []corev1.TopologySpreadConstraint{{MaxSkew: skew, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel}}
			}
			in.Pods = append(in.Pods, p)
		}
		in.Budget = -1
		plan := Solve(in)
		lb := LowerBound(in)
		nodes := 6
		if kind == "spread2" {
			nodes = 3
		}
		want := float64(nodes) * 0.31475
		t.Logf("%s: bound %.4f, plan %.4f on %d nodes", kind, lb, plan.Price(), len(plan.NewNodeClaims))
		if lb < want*(1-1e-6) || lb > plan.Price()+1e-9 {
			t.Errorf("%s: bound %.4f, want %.4f (and at most the plan's %.4f)", kind, lb, want, plan.Price())
		}
	}
}
