package solver

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// SpreadDefaults are kube-scheduler's default topology spread constraints
// (the PodTopologySpread plugin's defaultConstraints) by scheduler name, one
// entry per profile that has any. Their labelSelector is unset: each pod's
// comes from what selects it (DefaultSelector). Nil: no defaults (Joinery
// without --scheduler-config, as Karpenter).
type SpreadDefaults map[string][]corev1.TopologySpreadConstraint

// SystemSpreadDefaults are the constraints of the plugin's defaultingType
// System (kube-scheduler's systemDefaultConstraints): spread over nodes with
// maxSkew 3 and over zones with maxSkew 5, both ScheduleAnyway.
func SystemSpreadDefaults() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{
		{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
	}
}

// SelectorObjects looks up what DefaultSelector reads. Any func may be nil
// (nothing is then found); the lookups of one object return nil when it
// does not exist.
type SelectorObjects struct {
	Services              func(namespace string) []*corev1.Service
	ReplicationController func(namespace, name string) *corev1.ReplicationController
	ReplicaSet            func(namespace, name string) *appsv1.ReplicaSet
	StatefulSet           func(namespace, name string) *appsv1.StatefulSet
}

// Apply gives out, the reduction of p (PodFromK8s), the default constraints
// of p's scheduler when p has none of its own, as kube-scheduler's
// PodTopologySpread does: each with p's DefaultSelector as its
// labelSelector, and without matchLabelKeys (kube-scheduler replaces the
// selector they would add to). A pod nothing selects gets none.
func (d SpreadDefaults) Apply(out *Pod, p *corev1.Pod, objs SelectorObjects) {
	if len(d) == 0 || len(p.Spec.TopologySpreadConstraints) > 0 {
		return
	}
	name := p.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	cs := d[name]
	if len(cs) == 0 {
		return
	}
	sel := DefaultSelector(p, objs)
	if sel == nil {
		return
	}
	out.TopologySpread = make([]corev1.TopologySpreadConstraint, len(cs))
	for i := range cs {
		c := *cs[i].DeepCopy()
		c.LabelSelector, c.MatchLabelKeys = sel.DeepCopy(), nil
		out.TopologySpread[i] = c
	}
}

var (
	rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector is the selector kube-scheduler gives a pod's default
// spread constraints (pkg/scheduler/framework/plugins/helper
// DefaultSelector): the selectors of the Services in its namespace that
// select it, ANDed with its controller's when that is a
// ReplicationController, ReplicaSet or StatefulSet. Nil when empty (then
// the defaults do not apply).
func DefaultSelector(p *corev1.Pod, objs SelectorObjects) *metav1.LabelSelector {
	set := labels.Set{}
	if objs.Services != nil {
		for _, svc := range objs.Services(p.Namespace) {
			// A nil selector selects nothing, not everything.
			if svc.Spec.Selector != nil && selects(svc.Spec.Selector, p.Labels) {
				set = labels.Merge(set, svc.Spec.Selector)
			}
		}
	}
	var exprs []metav1.LabelSelectorRequirement
	switch owner, gvk := controllerKind(p); {
	case gvk == rcKind && objs.ReplicationController != nil:
		if rc := objs.ReplicationController(p.Namespace, owner); rc != nil {
			set = labels.Merge(set, rc.Spec.Selector)
		}
	case gvk == rsKind && objs.ReplicaSet != nil:
		if rs := objs.ReplicaSet(p.Namespace, owner); rs != nil {
			exprs = selectorRequirements(rs.Spec.Selector)
		}
	case gvk == ssKind && objs.StatefulSet != nil:
		if ss := objs.StatefulSet(p.Namespace, owner); ss != nil {
			exprs = selectorRequirements(ss.Spec.Selector)
		}
	}
	if len(set) == 0 && len(exprs) == 0 {
		return nil
	}
	out := &metav1.LabelSelector{MatchExpressions: exprs}
	if len(set) > 0 {
		out.MatchLabels = set
	}
	return out
}

// selects reports whether a Service's selector (equalities) matches labels:
// labels.Set(sel).AsSelector().Matches without building the selector, as
// the snapshot asks it for every pod and Service.
func selects(sel, podLabels map[string]string) bool {
	for k, v := range sel {
		if pv, ok := podLabels[k]; !ok || pv != v {
			return false
		}
	}
	return true
}

// controllerKind is the name and kind of the pod's controller ("" and the
// zero kind when it has none or its apiVersion does not parse).
func controllerKind(p *corev1.Pod) (string, schema.GroupVersionKind) {
	owner := metav1.GetControllerOfNoCopy(p)
	if owner == nil {
		return "", schema.GroupVersionKind{}
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return "", schema.GroupVersionKind{}
	}
	return owner.Name, gv.WithKind(owner.Kind)
}

// selectorRequirements are a workload selector's requirements as label
// selector expressions (matchLabels as In with one value), sorted by key as
// labels.Selector holds them; none for an invalid, empty or nil selector
// (kube-scheduler then adds nothing).
func selectorRequirements(ls *metav1.LabelSelector) []metav1.LabelSelectorRequirement {
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil
	}
	reqs, ok := s.Requirements()
	if !ok {
		return nil
	}
	out := make([]metav1.LabelSelectorRequirement, 0, len(reqs))
	for _, r := range reqs {
		e := metav1.LabelSelectorRequirement{Key: r.Key(), Operator: labelOperator(r.Operator())}
		if vs := r.ValuesUnsorted(); len(vs) > 0 {
			e.Values = vs
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	for i := range out {
		sort.Strings(out[i].Values)
	}
	return out
}

// labelOperator maps a labels.Selector operator back to a LabelSelector
// one (LabelSelectorAsSelector makes only these).
func labelOperator(op selection.Operator) metav1.LabelSelectorOperator {
	switch op {
	case selection.NotIn, selection.NotEquals:
		return metav1.LabelSelectorOpNotIn
	case selection.Exists:
		return metav1.LabelSelectorOpExists
	case selection.DoesNotExist:
		return metav1.LabelSelectorOpDoesNotExist
	default:
		return metav1.LabelSelectorOpIn
	}
}
