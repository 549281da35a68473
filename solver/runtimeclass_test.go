package solver

import (
	"reflect"
	"testing"

	"github.com/joinery/joinery/solver/resources"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func runtimeClasses(rcs ...*nodev1.RuntimeClass) RuntimeClassLookup {
	return func(name string) *nodev1.RuntimeClass {
		for _, rc := range rcs {
			if rc.Name == name {
				return rc
			}
		}
		return nil
	}
}

// kata has an overhead and a node selector and toleration (scheduling);
// runc has neither.
var (
	kata = &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: rl("cpu", "250m", "memory", "160Mi")},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "kata"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpEqual, Value: "kata", Effect: corev1.TaintEffectNoSchedule}}}}
	runc = &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "runc"}, Handler: "runc"}
)

func withClass(name string, overhead corev1.ResourceList) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{container("c", rl("cpu", "1", "memory", "1Gi"), nil)}, Overhead: overhead}
	if name != "" {
		spec.RuntimeClassName = &name
	}
	return spec
}

// A template naming kata gets its overhead (1 cpu + 250m, 1Gi + 160Mi),
// node selector and toleration; one already carrying the same overhead
// (written differently) is admitted unchanged; runc adds nothing.
func TestAdmitRuntimeClassSetsOverheadAndScheduling(t *testing.T) {
	lookup := runtimeClasses(kata, runc)
	spec := withClass("kata", nil)
	if why := AdmitRuntimeClass(&spec, lookup); why != "" {
		t.Fatalf("kata rejected: %s", why)
	}
	p := PodFromK8s(podWith(spec))
	want := resources.List{resources.CPU: 1250, resources.Memory: 1<<30 + 160<<20, resources.Pods: 1}
	if p.Requests != want {
		t.Errorf("requests %s, want %s", p.Requests, want)
	}
	if !reflect.DeepEqual(p.NodeSelector, map[string]string{"sandbox": "kata"}) || !reflect.DeepEqual(p.Tolerations, kata.Scheduling.Tolerations) {
		t.Errorf("node selector %v, tolerations %v: want kata's", p.NodeSelector, p.Tolerations)
	}
	spec.Overhead[corev1.ResourceCPU] = resource.MustParse("2")
	spec.NodeSelector["sandbox"] = "changed"
	if q := kata.Overhead.PodFixed[corev1.ResourceCPU]; q.String() != "250m" || kata.Scheduling.NodeSelector["sandbox"] != "kata" {
		t.Error("changing the admitted pod changed the RuntimeClass")
	}

	same := withClass("kata", rl("cpu", "0.25", "memory", "160Mi"))
	same.Tolerations = append([]corev1.Toleration(nil), kata.Scheduling.Tolerations...)
	if why := AdmitRuntimeClass(&same, lookup); why != "" || len(same.Tolerations) != 1 {
		t.Errorf("equal overhead: rejected %q, tolerations %v (want kata's once)", why, same.Tolerations)
	}
	if p := PodFromK8s(podWith(same)); p.Requests != want {
		t.Errorf("equal overhead: requests %s, want %s", p.Requests, want)
	}

	plain := withClass("runc", nil)
	if why := AdmitRuntimeClass(&plain, lookup); why != "" || plain.Overhead != nil || plain.NodeSelector != nil {
		t.Errorf("runc: rejected %q, overhead %v, selector %v; want nothing added", why, plain.Overhead, plain.NodeSelector)
	}
	none := withClass("", nil)
	if why := AdmitRuntimeClass(&none, nil); why != "" || none.Overhead != nil {
		t.Errorf("no class: rejected %q, overhead %v", why, none.Overhead)
	}
}

// What the admission plugin rejects is refused with a reason naming it.
func TestAdmitRuntimeClassRejections(t *testing.T) {
	lookup := runtimeClasses(kata, runc)
	conflict := withClass("kata", nil)
	conflict.NodeSelector = map[string]string{"sandbox": "gvisor"}
	for _, c := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"missing class", withClass("gvisor", nil),
			`the RuntimeClass admission plugin rejects the pod: RuntimeClass "gvisor" (spec.runtimeClassName) not found`},
		{"other overhead", withClass("kata", rl("cpu", "100m")),
			`the RuntimeClass admission plugin rejects the pod: spec.overhead differs from RuntimeClass "kata" overhead.podFixed`},
		{"overhead, class without", withClass("runc", rl("cpu", "100m")),
			`the RuntimeClass admission plugin rejects the pod: spec.overhead is set but RuntimeClass "runc" defines no overhead`},
		{"overhead, no class", withClass("", rl("cpu", "100m")),
			"the RuntimeClass admission plugin rejects the pod: spec.overhead is set without a RuntimeClass that defines it"},
		{"selector conflict", conflict,
			`the RuntimeClass admission plugin rejects the pod: RuntimeClass "kata" scheduling.nodeSelector[sandbox] = kata conflicts with spec.nodeSelector[sandbox] = gvisor`},
	} {
		spec := c.spec
		if got := AdmitRuntimeClass(&spec, lookup); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A DaemonSet whose template names kata reserves its container requests
// plus kata's overhead on a new node; the DaemonSet itself is not changed.
// One naming a missing class reserves nothing (its pods are rejected).
func TestAdmittedDaemonSetCountsOverhead(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "sandboxed-agent"}}
	ds.Spec.Template.Spec = withClass("kata", nil)
	ds.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	got, why := AdmittedDaemonSet(ds, runtimeClasses(kata))
	if why != "" {
		t.Fatal(why)
	}
	pool := simplePool(t, "general", 10, "m6i", "")
	pool.Labels = map[string]string{"sandbox": "kata"}
	oh := DaemonSetOverhead(pool, []DaemonSet{got})
	if want := (resources.List{resources.CPU: 1250, resources.Memory: 1<<30 + 160<<20, resources.Pods: 1}); oh[0] != want {
		t.Errorf("overhead on %s = %s, want %s", pool.InstanceTypes[0].Type.Name, oh[0], want)
	}
	if ds.Spec.Template.Spec.Overhead != nil || ds.Spec.Template.Spec.NodeSelector != nil {
		t.Errorf("the DaemonSet was changed: %+v", ds.Spec.Template.Spec)
	}
	if _, why := AdmittedDaemonSet(ds, nil); why != `the RuntimeClass admission plugin rejects the pod: RuntimeClass "kata" (spec.runtimeClassName) not found` {
		t.Errorf("missing class: %q", why)
	}
}
