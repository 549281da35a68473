package planner

import (
	"github.com/joinery/joinery/solver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
)

// docDaemonSet is a DaemonSet read from a document, reduced once every
// RuntimeClass is known (documents come in any order).
type docDaemonSet struct {
	ds  *appsv1.DaemonSet
	doc Doc
}

// runtimeClass looks a RuntimeClass of the manifests up (nil: none).
func (b *builder) runtimeClass(name string) *nodev1.RuntimeClass { return b.runtimeClasses[name] }

// pendingPod is a pod the manifests would create, reduced for the solver
// after what admission would do to it (solver.AdmitRuntimeClass): a pod
// admission would reject is refused with its reason, and its volumes are
// not read (it never exists to claim them).
func (b *builder) pendingPod(p *corev1.Pod) solver.Pod {
	if why := solver.AdmitRuntimeClass(&p.Spec, b.runtimeClass); why != "" {
		sp := solver.PodFromK8s(p)
		sp.Refused = why
		return sp
	}
	return b.solverPod(p, b.attached)
}

// daemonSetsInput adds the DaemonSets, their templates admitted
// (solver.AdmittedDaemonSet); one whose pods admission would reject runs
// none, so it reserves nothing on new nodes, and a warning says why.
func (b *builder) daemonSetsInput() {
	for _, dd := range b.daemonSets {
		ds, why := solver.AdmittedDaemonSet(dd.ds, b.runtimeClass)
		if why != "" {
			b.warn("%s document %d: DaemonSet %s reserves nothing on new nodes: %s", dd.doc.File, dd.doc.Index, dd.ds.Name, why)
			continue
		}
		b.out.Input.DaemonSets = append(b.out.Input.DaemonSets, ds)
	}
}
