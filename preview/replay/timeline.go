// Package replay turns a recording (preview/record) into what the local
// world must do to live the same workload again, and compares what
// Joinery bought with what the recorded cluster had: per bucket of
// recorded time, nodes, USD/hour, pending-pod seconds, pods evicted by
// disruption and spot interruptions.
package replay

import (
	"sort"
	"time"

	"github.com/joinery/joinery/preview/record"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Image is what every replayed container runs: a recording holds no
// images, and the local world's kubelets run none.
const Image = "registry.k8s.io/pause:3.10"

// Step is one action of a replay: apply or delete Object at At (recorded
// time since the recording's start; 0: before the replay starts).
type Step struct {
	At     time.Duration
	Delete bool
	Object *unstructured.Unstructured
}

// workloadKinds are the kinds a replay recreates; the pods of controllers
// are made by the local world's own controllers, bare pods directly.
var workloadKinds = map[string]string{
	"Deployment": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1", "Pod": "v1",
	"PodDisruptionBudget": "policy/v1", "PriorityClass": "scheduling.k8s.io/v1",
}

// maxUserPriority is the highest priority a PriorityClass of a user may
// have (the API server's limit); above it are the cluster's own.
const maxUserPriority = 1000000000

// systemNamespaces are the cluster's own: the local world has its own
// kube-system.
var systemNamespaces = map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true}

// Timeline is the steps that recreate the recording's workload in time
// order: its objects at the start, then every change of a workload kind.
// Pods a controller owns, system namespaces' objects and objects already
// being deleted at the start are left to the replaying cluster.
func Timeline(r *record.Recording) []Step {
	var steps []Step
	for _, o := range r.Objects {
		if u := workload(o.Kind, o.Object); u != nil && u.GetDeletionTimestamp() == nil {
			steps = append(steps, Step{Object: u})
		}
	}
	for _, e := range r.Events {
		u := workload(e.Kind, e.Object)
		if u == nil {
			continue
		}
		at := e.At.Sub(r.Start)
		switch {
		case e.Type == "DELETED" || u.GetDeletionTimestamp() != nil:
			steps = append(steps, Step{At: at, Delete: true, Object: u})
		case e.Kind == "Pod" && e.Type == "MODIFIED":
			// A bare pod changes only in status: nothing to replay.
		default:
			steps = append(steps, Step{At: at, Object: u})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At < steps[j].At })
	return dedupeDeletes(steps)
}

// workload is the object to apply for a recorded workload object, nil for
// one a replay does not recreate.
func workload(kind string, obj map[string]any) *unstructured.Unstructured {
	api, ok := workloadKinds[kind]
	if !ok {
		return nil
	}
	u := &unstructured.Unstructured{Object: deepCopy(obj)}
	if systemNamespaces[u.GetNamespace()] {
		return nil
	}
	if kind == "Pod" && controlled(u) {
		return nil
	}
	if kind == "PriorityClass" && countAt(u.Object, "value") > maxUserPriority {
		return nil // system-cluster-critical and the like: the replaying cluster has its own
	}
	u.SetAPIVersion(api)
	u.SetKind(kind)
	u.SetUID("")
	u.SetOwnerReferences(nil)
	u.SetCreationTimestamp(metav1.Time{})
	u.SetResourceVersion("")
	unstructured.RemoveNestedField(u.Object, "status")
	switch kind {
	case "Pod":
		unstructured.RemoveNestedField(u.Object, "spec", "nodeName") // the replay's scheduler places it
		withImages(u.Object, "spec")
	case "Deployment", "StatefulSet":
		withImages(u.Object, "spec", "template", "spec")
	case "Job":
		withImages(u.Object, "spec", "template", "spec")
		// The API server gives the new Job its own selector and labels.
		for _, l := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
			unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels", l)
		}
		unstructured.RemoveNestedField(u.Object, "spec", "selector")
	}
	return u
}

// withImages gives every container of the pod spec at path the replay's
// image.
func withImages(obj map[string]any, path ...string) {
	for _, f := range []string{"containers", "initContainers"} {
		cs, ok, _ := unstructured.NestedSlice(obj, append(path, f)...)
		if !ok {
			continue
		}
		for _, c := range cs {
			if cm, ok := c.(map[string]any); ok {
				cm["image"] = Image
			}
		}
		_ = unstructured.SetNestedSlice(obj, cs, append(path, f)...)
	}
}

// Namespaces are the namespaces the steps' objects live in.
func Namespaces(steps []Step) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range steps {
		if ns := s.Object.GetNamespace(); ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// controlled: a controller (ReplicaSet, StatefulSet, Job, DaemonSet) owns it.
func controlled(u *unstructured.Unstructured) bool {
	for _, ref := range u.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return len(u.GetOwnerReferences()) > 0
}

// dedupeDeletes keeps the first delete of each object (a pod is seen
// MODIFIED with a deletion time, then DELETED).
func dedupeDeletes(steps []Step) []Step {
	deleted := map[string]bool{}
	out := steps[:0]
	for _, s := range steps {
		k := s.Object.GetKind() + "/" + s.Object.GetNamespace() + "/" + s.Object.GetName()
		if s.Delete {
			if deleted[k] {
				continue
			}
			deleted[k] = true
		} else {
			delete(deleted, k)
		}
		out = append(out, s)
	}
	return out
}

func deepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// Pools are the recording's NodePools and EC2NodeClasses, as listed at the
// start or, when made during the window, as last seen, to apply before the
// workload.
func Pools(r *record.Recording) []*unstructured.Unstructured {
	api := map[string]string{"NodePool": "karpenter.sh/v1", "EC2NodeClass": "karpenter.k8s.aws/v1"}
	byName := map[string]int{}
	var out []*unstructured.Unstructured
	add := func(kind string, obj map[string]any) {
		u := &unstructured.Unstructured{Object: deepCopy(obj)}
		u.SetAPIVersion(api[kind])
		u.SetKind(kind)
		u.SetUID("")
		u.SetCreationTimestamp(metav1.Time{})
		k := kind + "/" + u.GetName()
		if i, ok := byName[k]; ok {
			out[i] = u
			return
		}
		byName[k] = len(out)
		out = append(out, u)
	}
	for _, o := range r.Objects {
		if api[o.Kind] != "" {
			add(o.Kind, o.Object)
		}
	}
	for _, e := range r.Events {
		if api[e.Kind] != "" && e.Type != "DELETED" {
			add(e.Kind, e.Object)
		}
	}
	return out
}
