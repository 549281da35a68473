package activities

import (
	"github.com/joinery/joinery/solver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// solverPod reduces a pod for the solver as kube-scheduler will see it:
// its volumes (solver.PodWithVolumes, the EBS volumes not in seen counted)
// and, when it has no spread constraints of its own, its scheduler's
// default ones (SpreadDefaults). Pods on nodes get them too: moved by a
// removal simulation, they are scheduled again like new pods.
func (s *snapshot) solverPod(p *corev1.Pod, seen solver.VolumeSet) solver.Pod {
	sp := solver.PodWithVolumes(p, s.volumes, seen)
	s.spread.Apply(&sp, p, s.selectors)
	return sp
}

// selectorObjects reads Services, ReplicationControllers, ReplicaSets and
// StatefulSets from the informer caches (nothing when they are not
// watched: then there are no SpreadDefaults either).
func (b *snapshots) selectorObjects() solver.SelectorObjects {
	c := b.cluster
	var objs solver.SelectorObjects
	if c.Services != nil {
		objs.Services = func(ns string) []*corev1.Service {
			o, _ := c.Services.Services(ns).List(labels.Everything())
			return o
		}
	}
	if c.ReplicationControllers != nil {
		objs.ReplicationController = func(ns, name string) *corev1.ReplicationController {
			o, _ := c.ReplicationControllers.ReplicationControllers(ns).Get(name)
			return o
		}
	}
	if c.ReplicaSets != nil {
		objs.ReplicaSet = func(ns, name string) *appsv1.ReplicaSet {
			o, _ := c.ReplicaSets.ReplicaSets(ns).Get(name)
			return o
		}
	}
	if c.StatefulSets != nil {
		objs.StatefulSet = func(ns, name string) *appsv1.StatefulSet {
			o, _ := c.StatefulSets.StatefulSets(ns).Get(name)
			return o
		}
	}
	return objs
}
