// Package headroom is the spare-capacity policy: from CapacityBuffers
// (autoscaling.x-k8s.io) with their resolved pod templates, and from
// NodePools annotated joinery.sh/headroom, the virtual pods the solver
// plans for as the lowest-priority pending pods; and the accounting of
// real pods that landed in buffer space (Tracker). Virtual pods are never
// created as Pod objects: the kube-scheduler sees their space as free, so
// real pods take it first. Pure: no I/O.
package headroom

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/joinery/joinery/api/capacitybuffer"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations of virtual pods (Karpenter's names), and the
// NodePool annotation of the percentage form (a Joinery extension).
const (
	LabelBufferName      = "karpenter.sh/capacity-buffer-name"
	LabelBufferNamespace = "karpenter.sh/capacity-buffer-namespace"
	AnnotationVirtual    = "karpenter.sh/capacity-buffer-fake-pod"
	// AnnotationPoolHeadroom on a NodePool: "N%" (1-100), spare capacity
	// of N% of the requests of the pods on the pool's nodes.
	AnnotationPoolHeadroom = "joinery.sh/headroom"
	// VirtualPriority is the virtual pods' priority: below any real pod.
	VirtualPriority int32 = math.MinInt32
	// MaxReplicas caps one buffer's virtual pods (a limits-only buffer of
	// a tiny template could otherwise ask for millions).
	MaxReplicas = 1000
	// PoolBufferNamespace is the pseudo-namespace of a pool's headroom
	// (its key: "nodepool/<pool>").
	PoolBufferNamespace = "nodepool"
)

// Key names a buffer: "namespace/name" (a pool's headroom:
// "nodepool/<pool>").
func Key(namespace, name string) string { return namespace + "/" + name }

// Validate checks what the CRD's schema and CEL rules check, for objects
// written before them or through another schema: exactly one of
// podTemplateRef and scalableRef, replicas or limits with podTemplateRef,
// percentage only with scalableRef, no negative counts, a supported
// scalableRef kind. The error names the field.
func Validate(b *capacitybuffer.CapacityBuffer) error {
	s := b.Spec
	switch {
	case s.PodTemplateRef == nil && s.ScalableRef == nil:
		return errors.New("spec: one of podTemplateRef and scalableRef must be set")
	case s.PodTemplateRef != nil && s.ScalableRef != nil:
		return errors.New("spec: podTemplateRef and scalableRef are exclusive (set one)")
	case s.PodTemplateRef != nil && s.PodTemplateRef.Name == "":
		return errors.New("spec.podTemplateRef.name: must be set")
	case s.PodTemplateRef != nil && s.Replicas == nil && len(s.Limits) == 0:
		return errors.New("spec.replicas: with podTemplateRef, replicas or limits must be set")
	case s.PodTemplateRef != nil && s.Percentage != nil:
		return errors.New("spec.percentage: only applies with scalableRef")
	case s.Replicas != nil && *s.Replicas < 0:
		return fmt.Errorf("spec.replicas: %d is negative", *s.Replicas)
	case s.Percentage != nil && *s.Percentage < 0:
		return fmt.Errorf("spec.percentage: %d is negative", *s.Percentage)
	}
	if r := s.ScalableRef; r != nil {
		if r.Name == "" {
			return errors.New("spec.scalableRef.name: must be set")
		}
		if r.APIGroup != "" && r.APIGroup != "apps" {
			return fmt.Errorf("spec.scalableRef.apiGroup: %q is not supported (apps Deployment, ReplicaSet, StatefulSet)", r.APIGroup)
		}
		switch r.Kind {
		case capacitybuffer.KindDeployment, capacitybuffer.KindReplicaSet, capacitybuffer.KindStatefulSet:
		default:
			return fmt.Errorf("spec.scalableRef.kind: %q is not supported (Deployment, ReplicaSet, StatefulSet)", r.Kind)
		}
	}
	for name, q := range s.Limits {
		if q.Sign() < 0 {
			return fmt.Errorf("spec.limits.%s: %s is negative", name, q.String())
		}
	}
	if st := b.Strategy(); st != capacitybuffer.ActiveCapacity {
		return fmt.Errorf("spec.provisioningStrategy: %q is not handled (only %s)", st, capacitybuffer.ActiveCapacity)
	}
	return nil
}

// Source is what a buffer's reference resolved to.
type Source struct {
	// Template is the chunk's pod template.
	Template corev1.PodTemplateSpec
	// ScalableReplicas are the scalable workload's replicas (percentage).
	ScalableReplicas int32
}

// Replicas is the number of chunks (upstream's rule): the larger of
// replicas and percentage of the workload's replicas (rounded up, at
// least 1 when both are positive), capped by how many chunks limits hold;
// limits alone: as many as they hold. At most MaxReplicas.
func Replicas(s capacitybuffer.Spec, src Source) int32 {
	var n int32
	set := false
	if s.Replicas != nil {
		n, set = *s.Replicas, true
	}
	if s.Percentage != nil && s.ScalableRef != nil && src.ScalableReplicas > 0 {
		p := int32(math.Ceil(float64(src.ScalableReplicas) * float64(*s.Percentage) / 100))
		if p < 1 && *s.Percentage > 0 {
			p = 1
		}
		n, set = max(n, p), true
	}
	if len(s.Limits) > 0 {
		if fit, ok := limitReplicas(s.Limits, ChunkRequests(src.Template.Spec)); ok {
			if !set || fit < n {
				n = fit
			}
			set = true
		}
	}
	return min(max(n, 0), MaxReplicas)
}

// ChunkRequests are one chunk's effective requests (containers, init
// containers, overhead: what a pod of the template would request).
func ChunkRequests(spec corev1.PodSpec) resources.List {
	return solver.PodFromK8s(&corev1.Pod{Spec: spec}).Requests
}

// limitReplicas: floor(limit/request) over every resource both name, the
// smallest; false when they share none.
func limitReplicas(limits corev1.ResourceList, req resources.List) (int32, bool) {
	lim, _ := resources.FromResourceList(limits)
	best, ok := int64(math.MaxInt32), false
	for name := range limits {
		i := resources.IndexOf(name)
		if i < 0 || i == resources.Pods || req[i] <= 0 {
			continue
		}
		best, ok = min(best, lim[i]/req[i]), true
	}
	return int32(best), ok
}

// VirtualPods are n pods of the template for the buffer key ns/name: their
// scheduling (node selector, node affinity, tolerations, resources,
// overhead, runtime class, priority) as the template says, with
// VirtualPriority, Karpenter's buffer labels and annotation, and no volumes,
// topology spread or pod (anti-)affinity (they would count as, or against,
// real pods the kube-scheduler places).
func VirtualPods(ns, name string, tmpl corev1.PodTemplateSpec, n int32) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		spec := *tmpl.Spec.DeepCopy()
		spec.Volumes, spec.TopologySpreadConstraints, spec.NodeName = nil, nil, ""
		if spec.Affinity != nil {
			spec.Affinity = &corev1.Affinity{NodeAffinity: spec.Affinity.NodeAffinity}
		}
		for j := range spec.Containers {
			spec.Containers[j].VolumeMounts = nil
		}
		prio := VirtualPriority
		spec.Priority, spec.PriorityClassName = &prio, ""
		podName := fmt.Sprintf("capacitybuffer-%s-%d", name, i)
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: podName, UID: types.UID("capacitybuffer/" + ns + "/" + podName),
				Labels:      map[string]string{LabelBufferName: name, LabelBufferNamespace: ns},
				Annotations: map[string]string{AnnotationVirtual: "true"},
			},
			Spec:   spec,
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		})
	}
	return out
}

// IsVirtual reports whether a pod is a buffer's virtual pod.
func IsVirtual(p *corev1.Pod) bool { return p.Annotations[AnnotationVirtual] == "true" }

// BufferOf is the buffer key of a virtual pod's "namespace/name" pod key
// ("" when it is not one).
func BufferOf(podKey string) string {
	ns, name, ok := strings.Cut(podKey, "/")
	if !ok || !strings.HasPrefix(name, "capacitybuffer-") {
		return ""
	}
	name = strings.TrimPrefix(name, "capacitybuffer-")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return Key(ns, name[:i])
	}
	return ""
}

// ParsePoolHeadroom reads a joinery.sh/headroom value: "N%" with N an
// integer from 1 to 100. The error names the annotation.
func ParsePoolHeadroom(v string) (int32, error) {
	s := strings.TrimSpace(v)
	num, ok := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n < 1 || n > 100 {
		return 0, fmt.Errorf("metadata.annotations[%s]: %q is not a percentage from 1%% to 100%% (e.g. \"10%%\")", AnnotationPoolHeadroom, v)
	}
	return int32(n), nil
}

// PoolVirtualPods are a pool's headroom: pct% of the requests of the pods
// on its nodes (DaemonSet pods aside), as ceil(pct% of their number)
// virtual pods each of their average requests, held to the pool's nodes
// (node selector karpenter.sh/nodepool) and tolerating every taint (the
// pool's nodes carry its taints). None for a pool without pods.
func PoolVirtualPods(pool string, pct int32, podRequests []resources.List) []*corev1.Pod {
	if len(podRequests) == 0 || pct <= 0 {
		return nil
	}
	var total resources.List
	for _, r := range podRequests {
		total = total.Add(r)
	}
	n := int32(math.Ceil(float64(len(podRequests)) * float64(pct) / 100))
	n = min(max(n, 1), MaxReplicas)
	var avg resources.List
	for i := range avg {
		if i == resources.Pods {
			continue
		}
		avg[i] = (total[i] + int64(len(podRequests)) - 1) / int64(len(podRequests))
	}
	avg[resources.Pods] = 0
	rl := avg.ToResourceList()
	delete(rl, corev1.ResourcePods)
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{apiv1.LabelNodePool: pool},
		Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers:   []corev1.Container{{Name: "headroom", Resources: corev1.ResourceRequirements{Requests: rl}}},
	}}
	return VirtualPods(PoolBufferNamespace, pool, tmpl, n)
}
