package solver

import (
	"reflect"
	"sort"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// webObjects: ReplicaSet web-5d8f (selector app=web, pod-template-hash=5d8f)
// and StatefulSet db (app=db) in default, ReplicationController legacy
// (app=legacy), a Service selecting app=web, one selecting app=other and
// one with no selector.
func webObjects() SelectorObjects {
	svc := func(name string, sel map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.ServiceSpec{Selector: sel}}
	}
	return SelectorObjects{
		Services: func(ns string) []*corev1.Service {
			if ns != "default" {
				return nil
			}
			return []*corev1.Service{svc("web", map[string]string{"app": "web"}), svc("other", map[string]string{"app": "other"}), svc("external", nil)}
		},
		ReplicaSet: func(ns, name string) *appsv1.ReplicaSet {
			if ns != "default" || name != "web-5d8f" {
				return nil
			}
			return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "5d8f"}}}}
		},
		StatefulSet: func(ns, name string) *appsv1.StatefulSet {
			if name != "db" {
				return nil
			}
			return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "cache"}}}}}}
		},
		ReplicationController: func(ns, name string) *corev1.ReplicationController {
			if name != "legacy" {
				return nil
			}
			return &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "legacy"}}}
		},
	}
}

func ownedPod(name string, podLabels map[string]string, apiVersion, kind, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: podLabels}}
	if kind != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner, UID: types.UID("u-" + owner), Controller: &yes}}
	}
	return p
}

// Zone DoNotSchedule maxSkew 1, and hostname ScheduleAnyway maxSkew 2 with
// matchLabelKeys (dropped, as kube-scheduler replaces the selector).
func listDefaults() SpreadDefaults {
	return SpreadDefaults{corev1.DefaultSchedulerName: {
		{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule},
		{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MatchLabelKeys: []string{"pod-template-hash"}},
	}}
}

// A pod of ReplicaSet web-5d8f with no constraints of its own gets both
// defaults, selecting what the matching Service and its ReplicaSet select.
func TestSpreadDefaultsUseOwnerReplicaSetSelector(t *testing.T) {
	k := ownedPod("web-5d8f-x", map[string]string{"app": "web", "pod-template-hash": "5d8f"}, "apps/v1", "ReplicaSet", "web-5d8f")
	p := PodFromK8s(k)
	listDefaults().Apply(&p, k, webObjects())
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
		{Key: "pod-template-hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"5d8f"}},
	}}
	want := []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel},
		{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel},
	}
	if !reflect.DeepEqual(p.TopologySpread, want) {
		t.Errorf("spread %+v,\nwant %+v", p.TopologySpread, want)
	}
}

// A pod with its own constraints keeps them only; a pod of another
// scheduler, or one nothing selects (no Service matches, no controller),
// gets none; StatefulSet and ReplicationController owners give theirs.
func TestSpreadDefaultsApplyOnlyWithoutOwnConstraints(t *testing.T) {
	d, objs := listDefaults(), webObjects()
	own := []corev1.TopologySpreadConstraint{{MaxSkew: 4, TopologyKey: apiv1.LabelCapacityType, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	k := ownedPod("web-5d8f-y", map[string]string{"app": "web", "pod-template-hash": "5d8f"}, "apps/v1", "ReplicaSet", "web-5d8f")
	k.Spec.TopologySpreadConstraints = own
	p := PodFromK8s(k)
	d.Apply(&p, k, objs)
	if !reflect.DeepEqual(p.TopologySpread, own) {
		t.Errorf("own constraints: spread %+v, want only %+v", p.TopologySpread, own)
	}

	other := ownedPod("web-5d8f-z", map[string]string{"app": "web"}, "apps/v1", "ReplicaSet", "web-5d8f")
	other.Spec.SchedulerName = "batch-scheduler"
	lonely := ownedPod("lonely", map[string]string{"app": "lonely"}, "batch/v1", "Job", "lonely")
	for _, k := range []*corev1.Pod{other, lonely} {
		p := PodFromK8s(k)
		d.Apply(&p, k, objs)
		if p.TopologySpread != nil {
			t.Errorf("%s: spread %+v, want none", k.Name, p.TopologySpread)
		}
	}

	for _, c := range []struct {
		pod  *corev1.Pod
		want *metav1.LabelSelector
	}{
		{ownedPod("db-0", map[string]string{"app": "db"}, "apps/v1", "StatefulSet", "db"),
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"cache", "db"}}}}},
		{ownedPod("legacy-x", map[string]string{"app": "legacy"}, "v1", "ReplicationController", "legacy"),
			&metav1.LabelSelector{MatchLabels: map[string]string{"app": "legacy"}}},
		// An owner of a kind the scheduler does not read: the Service only.
		{ownedPod("web-ds", map[string]string{"app": "web"}, "apps/v1", "DaemonSet", "web"),
			&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	} {
		if got := DefaultSelector(c.pod, objs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: selector %+v, want %+v", c.pod.Name, got, c.want)
		}
	}
}

// With the zone default (DoNotSchedule, maxSkew 1) three replicas of web
// get a node in each of the three zones; without it they share one node.
func TestSolveHonoursDefaultSpread(t *testing.T) {
	var in Input
	for _, name := range []string{"web-5d8f-a", "web-5d8f-b", "web-5d8f-c"} {
		k := ownedPod(name, map[string]string{"app": "web", "pod-template-hash": "5d8f"}, "apps/v1", "ReplicaSet", "web-5d8f")
		k.Spec.Containers = []corev1.Container{container("c", rl("cpu", "500m", "memory", "512Mi"), nil)}
		p := PodFromK8s(k)
		SpreadDefaults{corev1.DefaultSchedulerName: listDefaults()[corev1.DefaultSchedulerName][:1]}.Apply(&p, k, webObjects())
		in.Pods = append(in.Pods, p)
	}
	in.NodePools = []NodePool{simplePool(t, "general", 10, "m6i", "")}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	var zones []string
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		for _, r := range nc.Requirements {
			if r.Key == apiv1.LabelZone && len(nc.Pods) == 1 {
				zones = append(zones, r.Values...)
			}
		}
	}
	sort.Strings(zones)
	if want := []string{"us-east-1a", "us-east-1b", "us-east-1c"}; !reflect.DeepEqual(zones, want) {
		t.Errorf("one-pod claims in zones %v, want %v (claims %d)", zones, want, len(plan.NewNodeClaims))
	}

	for i := range in.Pods {
		in.Pods[i].TopologySpread = nil
	}
	if plan := Solve(in); len(plan.NewNodeClaims) != 1 || len(plan.NewNodeClaims[0].Pods) != 3 {
		t.Errorf("without defaults: %d claims, want one holding the three pods", len(plan.NewNodeClaims))
	}
}

// BenchmarkSpreadDefaultsApply: one pending pod of a ReplicaSet among 100
// Services in its namespace (what the snapshot does per pod with
// --scheduler-config).
func BenchmarkSpreadDefaultsApply(b *testing.B) {
	var svcs []*corev1.Service
	for i := 0; i < 100; i++ {
		svcs = append(svcs, &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "svc-" + string(rune('a'+i%26)) + string(rune('a'+i/26))}}})
	}
	objs := webObjects()
	objs.Services = func(string) []*corev1.Service { return svcs }
	d := listDefaults()
	k := ownedPod("web-5d8f-x", map[string]string{"app": "web", "pod-template-hash": "5d8f"}, "apps/v1", "ReplicaSet", "web-5d8f")
	p := PodFromK8s(k)
	b.ReportAllocs()
	for b.Loop() {
		p.TopologySpread = nil
		d.Apply(&p, k, objs)
	}
}
