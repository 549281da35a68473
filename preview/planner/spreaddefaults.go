package planner

import (
	"github.com/joinery/joinery/solver"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	rsKind  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind  = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	jobKind = batchv1.SchemeGroupVersion.WithKind("Job")
)

// selectorIndex holds what selects the manifests' pods, for the selector of
// kube-scheduler's default spread constraints (solver.DefaultSelector):
// their Services, and the ReplicaSets and StatefulSets that control the
// pods expanded from workloads.
type selectorIndex struct {
	services     map[string][]*corev1.Service // by namespace
	replicaSets  map[string]*appsv1.ReplicaSet
	statefulSets map[string]*appsv1.StatefulSet // by namespace/name
}

func newSelectorIndex() *selectorIndex {
	return &selectorIndex{services: map[string][]*corev1.Service{}, replicaSets: map[string]*appsv1.ReplicaSet{},
		statefulSets: map[string]*appsv1.StatefulSet{}}
}

func (x *selectorIndex) addService(s *corev1.Service) {
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	x.services[s.Namespace] = append(x.services[s.Namespace], s)
}

func (x *selectorIndex) objects() solver.SelectorObjects {
	return solver.SelectorObjects{
		Services:    func(ns string) []*corev1.Service { return x.services[ns] },
		ReplicaSet:  func(ns, name string) *appsv1.ReplicaSet { return x.replicaSets[ns+"/"+name] },
		StatefulSet: func(ns, name string) *appsv1.StatefulSet { return x.statefulSets[ns+"/"+name] },
	}
}

// controlledBy makes the pods expanded from a workload controlled as their
// controller makes them: a Deployment's and a ReplicaSet's by a ReplicaSet
// of the workload's name and selector (the Deployment's pod-template-hash
// left out: all its pods here are of one revision), a StatefulSet's by the
// StatefulSet, a Job's by the Job (a kind kube-scheduler's default selector
// does not read).
func (b *builder) controlledBy(pods []workloadPod, kind schema.GroupVersionKind, name string, sel *metav1.LabelSelector) {
	if len(pods) == 0 {
		return
	}
	ns := pods[0].pod.Namespace
	switch kind {
	case rsKind:
		b.selectors.replicaSets[ns+"/"+name] = &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	case ssKind:
		b.selectors.statefulSets[ns+"/"+name] = &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: sel}}
	}
	yes := true
	for _, wp := range pods {
		wp.pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: kind.GroupVersion().String(), Kind: kind.Kind, Name: name, Controller: &yes}}
	}
}
