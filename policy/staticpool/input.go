package staticpool

import (
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelStaticPool marks the virtual pods a static pool's launches are
// planned for (never written anywhere).
const LabelStaticPool = "joinery.sh/static-pool"

// Input is the solver input of n launches of static pool sp: n virtual
// pods that request one pod slot, each on its own node (required hostname
// anti-affinity), spread over zones (ScheduleAnyway) counting one marker
// pod per NodeClaim the pool has (not being deleted) with a known zone,
// in the pool alone, so each gets the pool's cheapest instance types. The
// controller's static launches and `starter plan` both plan with it; the
// caller adds DaemonSets, namespace labels and the budget.
func Input(sp solver.NodePool, claims []*apiv1.NodeClaim, n int) solver.Input {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{LabelStaticPool: sp.Name}}
	lbl := map[string]string{LabelStaticPool: sp.Name}
	var req resources.List
	req[resources.Pods] = 1
	in := solver.Input{NodePools: []solver.NodePool{sp}}
	for i := 0; i < n; i++ {
		in.Pods = append(in.Pods, solver.Pod{
			Namespace: "joinery-static", Name: fmt.Sprintf("%s-%d", sp.Name, i), UID: fmt.Sprintf("static-%s-%d", sp.Name, i),
			Requests: req, Labels: lbl,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TopologySpread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelZone,
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel}},
			PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{TopologyKey: apiv1.LabelHostname, LabelSelector: sel}}},
		})
	}
	for _, nc := range claims {
		zone := nc.Labels[apiv1.LabelZone]
		if nc.Labels[apiv1.LabelNodePool] != sp.Name || nc.DeletionTimestamp != nil || zone == "" {
			continue
		}
		node := nc.Status.NodeName
		if node == "" {
			node = "nodeclaim/" + nc.Name
		}
		in.ExistingPods = append(in.ExistingPods, solver.ExistingPod{
			Pod: solver.Pod{Namespace: "joinery-static", Name: "existing-" + nc.Name, Labels: lbl}, Node: node, Zone: zone})
	}
	return in
}
