package solver

import (
	"fmt"
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Volume drivers and provisioners the solver knows by name.
const (
	// EBSDriver is the AWS EBS CSI driver (CSINode driver name, PV
	// spec.csi.driver and StorageClass provisioner).
	EBSDriver = "ebs.csi.aws.com"
	// InTreeEBSProvisioner is the retired in-tree EBS plugin; its volumes
	// are served by EBSDriver (CSI migration).
	InTreeEBSProvisioner = "kubernetes.io/aws-ebs"
)

// maxVolumeAlternatives caps the ORed node requirement sets a pod's volumes
// make (the cross product over volumes with several terms each).
const maxVolumeAlternatives = 64

// VolumeObjects looks up what a pod's volumes name. Any func may be nil
// (the object is then never found); a func returns nil for a missing object.
type VolumeObjects struct {
	PVC          func(namespace, name string) *corev1.PersistentVolumeClaim
	PV           func(name string) *corev1.PersistentVolume
	StorageClass func(name string) *storagev1.StorageClass
}

// PodVolumes is what a pod's volumes mean for scheduling.
type PodVolumes struct {
	// Requirements are ORed alternatives of ANDed node requirements (nil:
	// the volumes do not constrain the node): the node affinity of the
	// bound PersistentVolumes (each NodeSelectorTerm one alternative) and
	// their zone labels, and for an unbound WaitForFirstConsumer claim the
	// StorageClass's allowedTopologies (each term one alternative); the
	// cross product over the pod's volumes. Keys are normalized
	// (apiv1.NormalizeLabelKey: topology.ebs.csi.aws.com/zone is the zone).
	Requirements [][]apiv1.NodeSelectorRequirementWithMinValues
	// EBS are the distinct EBS volumes the pod needs attached to its node
	// (claims bound to or provisioned by the EBS CSI driver or the in-tree
	// EBS plugin, generic ephemeral volumes of such a class, inline CSI
	// volumes of the driver), by a stable ID: "pv/<name>" for a bound
	// claim, "pvc/<namespace>/<name>" for an unbound one.
	EBS []string
	// Refused is why the kube-scheduler cannot place the pod whatever the
	// node ("" when it can): a claim that does not exist, is being deleted,
	// is lost, is unbound with Immediate binding or no StorageClass, or
	// names a PersistentVolume or StorageClass that does not exist.
	Refused string
}

// VolumesOf reads a pod's volumes as the kube-scheduler's VolumeBinding,
// VolumeZone and NodeVolumeLimits plugins do (and Karpenter's volume
// topology): persistentVolumeClaim volumes by claim name, generic ephemeral
// volumes by the claim they create, <pod>-<volume> (from the volume's claim
// template while that claim does not exist yet), inline CSI and in-tree EBS
// volumes. A PersistentVolume with a local or hostPath source keeps its
// node affinity but for kubernetes.io/hostname (Karpenter's rule: the pod
// may move to a new node). Unbound claims with a WaitForFirstConsumer class
// follow the pod: only allowedTopologies constrain the node.
func VolumesOf(p *corev1.Pod, objs VolumeObjects) PodVolumes {
	var out PodVolumes
	alts := [][]req{nil}
	seen := map[string]bool{}
	refuse := func(format string, args ...any) {
		if out.Refused == "" {
			out.Refused = fmt.Sprintf(format, args...)
		}
	}
	addEBS := func(id string) {
		if !seen[id] {
			seen[id] = true
			out.EBS = append(out.EBS, id)
		}
	}
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		switch {
		case v.CSI != nil:
			if v.CSI.Driver == EBSDriver {
				addEBS("inline/" + p.Namespace + "/" + p.Name + "/" + v.Name)
			}
			continue
		case v.AWSElasticBlockStore != nil:
			addEBS("ebs/" + v.AWSElasticBlockStore.VolumeID)
			continue
		case v.PersistentVolumeClaim == nil && v.Ephemeral == nil:
			continue
		}
		name := ""
		var pvc *corev1.PersistentVolumeClaim
		if v.PersistentVolumeClaim != nil {
			name = v.PersistentVolumeClaim.ClaimName
			pvc = lookupPVC(objs, p.Namespace, name)
		} else {
			name = p.Name + "-" + v.Name
			pvc = lookupPVC(objs, p.Namespace, name)
			switch {
			case pvc == nil && v.Ephemeral.VolumeClaimTemplate != nil:
				// Not created yet: the ephemeral volume controller makes it
				// from the template as soon as the pod exists.
				pvc = &corev1.PersistentVolumeClaim{Spec: *v.Ephemeral.VolumeClaimTemplate.Spec.DeepCopy()}
				pvc.Namespace, pvc.Name = p.Namespace, name
			case pvc != nil && !ownedBy(pvc, p):
				refuse("PVC %s/%s was not created for pod %s/%s (pod cannot be started)", p.Namespace, name, p.Namespace, p.Name)
				continue
			}
		}
		if pvc == nil {
			refuse("persistentvolumeclaim %q not found", name)
			continue
		}
		if seen["claim/"+name] {
			continue // the same claim mounted twice
		}
		seen["claim/"+name] = true
		terms, driver, ok := claimTopology(pvc, objs, refuse)
		if !ok {
			continue
		}
		if driver == EBSDriver {
			if pvc.Spec.VolumeName != "" {
				addEBS("pv/" + pvc.Spec.VolumeName)
			} else {
				addEBS("pvc/" + pvc.Namespace + "/" + pvc.Name)
			}
		}
		if len(terms) > 0 {
			alts = crossAlternatives(alts, terms)
		}
	}
	for _, a := range alts {
		if len(a) == 0 {
			return out // one alternative is "any node"
		}
	}
	out.Requirements = alts
	return out
}

func lookupPVC(objs VolumeObjects, ns, name string) *corev1.PersistentVolumeClaim {
	if objs.PVC == nil {
		return nil
	}
	return objs.PVC(ns, name)
}

// ownedBy: a generic ephemeral volume's claim must be controlled by its pod
// (the scheduler refuses a claim of that name made by someone else). Pods
// without a UID (templates) own any claim of the name.
func ownedBy(pvc *corev1.PersistentVolumeClaim, p *corev1.Pod) bool {
	if p.UID == "" {
		return true
	}
	for _, o := range pvc.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID == p.UID
		}
	}
	return false
}

// claimTopology returns the node requirement alternatives and the driver
// of one claim; ok is false when the claim makes the pod unschedulable
// (refuse was called).
func claimTopology(pvc *corev1.PersistentVolumeClaim, objs VolumeObjects, refuse func(string, ...any)) (terms [][]req, driver string, ok bool) {
	key := pvc.Namespace + "/" + pvc.Name
	switch {
	case pvc.DeletionTimestamp != nil:
		refuse("persistentvolumeclaim %s is being deleted", key)
		return nil, "", false
	case pvc.Status.Phase == corev1.ClaimLost:
		refuse("persistentvolumeclaim %s is bound to a persistentvolume that no longer exists", key)
		return nil, "", false
	}
	if pvc.Spec.VolumeName != "" {
		var pv *corev1.PersistentVolume
		if objs.PV != nil {
			pv = objs.PV(pvc.Spec.VolumeName)
		}
		if pv == nil {
			refuse("persistentvolumeclaim %s is bound to persistentvolume %q, which does not exist", key, pvc.Spec.VolumeName)
			return nil, "", false
		}
		if pv.DeletionTimestamp != nil {
			refuse("persistentvolume %s of persistentvolumeclaim %s is being deleted", pv.Name, key)
			return nil, "", false
		}
		return pvTopology(pv), pvDriver(pv), true
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class == "" {
		refuse("persistentvolumeclaim %s is unbound and has no StorageClass: it waits for a PersistentVolume to be bound to it", key)
		return nil, "", false
	}
	var sc *storagev1.StorageClass
	if objs.StorageClass != nil {
		sc = objs.StorageClass(class)
	}
	if sc == nil {
		refuse("storageclass %q of persistentvolumeclaim %s not found", class, key)
		return nil, "", false
	}
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		refuse("persistentvolumeclaim %s is unbound and its StorageClass %s binds Immediate: the pod waits until the volume is provisioned and bound", key, class)
		return nil, "", false
	}
	for _, t := range sc.AllowedTopologies {
		var reqs []req
		for _, e := range t.MatchLabelExpressions {
			reqs = append(reqs, req{Key: apiv1.NormalizeLabelKey(e.Key), Operator: apiv1.OpIn, Values: append([]string(nil), e.Values...)})
		}
		if len(reqs) > 0 {
			terms = append(terms, reqs)
		}
	}
	d := sc.Provisioner
	if d == InTreeEBSProvisioner {
		d = EBSDriver
	}
	return terms, d, true
}

// pvDriver is the CSI driver serving a PersistentVolume ("" for none).
func pvDriver(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.CSI != nil:
		return pv.Spec.CSI.Driver
	case pv.Spec.AWSElasticBlockStore != nil:
		return EBSDriver
	}
	return ""
}

// pvTopology is a bound volume's node affinity (one alternative per term)
// with its zone and region labels ANDed to each (the VolumeZone plugin;
// several zones are written "a__b").
func pvTopology(pv *corev1.PersistentVolume) [][]req {
	var labelReqs []req
	for _, k := range []string{apiv1.LabelZone, "failure-domain.beta.kubernetes.io/zone", apiv1.LabelRegion, "failure-domain.beta.kubernetes.io/region"} {
		if v, ok := pv.Labels[k]; ok && v != "" {
			labelReqs = append(labelReqs, req{Key: apiv1.NormalizeLabelKey(k), Operator: apiv1.OpIn, Values: strings.Split(v, "__")})
		}
	}
	var terms [][]req
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		local := pv.Spec.Local != nil || pv.Spec.HostPath != nil
		for _, t := range na.Required.NodeSelectorTerms {
			var reqs []req
			add := func(key string, op corev1.NodeSelectorOperator, values []string) {
				if local && key == apiv1.LabelHostname {
					return
				}
				reqs = append(reqs, req{Key: apiv1.NormalizeLabelKey(key), Operator: string(op), Values: append([]string(nil), values...)})
			}
			for _, e := range t.MatchExpressions {
				add(e.Key, e.Operator, e.Values)
			}
			for _, f := range t.MatchFields {
				if f.Key == "metadata.name" {
					add(apiv1.LabelHostname, f.Operator, f.Values)
				}
			}
			if len(reqs) == 0 && !(local && len(t.MatchExpressions)+len(t.MatchFields) > 0) {
				continue // an empty term constrains nothing here
			}
			terms = append(terms, append(reqs, labelReqs...))
		}
	}
	if len(terms) == 0 && len(labelReqs) > 0 {
		terms = [][]req{labelReqs}
	}
	return terms
}

// crossAlternatives ANDs every alternative with every term (ORed), without
// duplicates, keeping at most maxVolumeAlternatives.
func crossAlternatives(alts, terms [][]req) [][]req {
	var out [][]req
	keys := map[string]bool{}
	for _, a := range alts {
		for _, t := range terms {
			m := append(append(make([]req, 0, len(a)+len(t)), a...), t...)
			k := reqsKey(m)
			if keys[k] {
				continue
			}
			keys[k] = true
			out = append(out, m)
			if len(out) == maxVolumeAlternatives {
				return out
			}
		}
	}
	return out
}

func reqsKey(rs []req) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Key + "\x00" + r.Operator + "\x00" + strings.Join(r.Values, "\x01")
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x02")
}

// VolumeSet hands out each EBS volume once: a volume several pods use is
// attached to a node once, so only the first pod that brings it (existing
// pods before pending ones, each in a fixed order) counts it.
type VolumeSet map[string]bool

// Count returns how many of ids are new to the set, and adds them.
func (s VolumeSet) Count(ids []string) int64 {
	var n int64
	for _, id := range ids {
		if !s[id] {
			s[id] = true
			n++
		}
	}
	return n
}

// PodWithVolumes is PodFromK8s with the pod's volumes read (VolumesOf):
// their node requirements, refusal, and in Requests[EBSVolumes] the EBS
// volumes not in seen (added to it; nil: all of the pod's). The
// controller's snapshot and the offline planner both reduce pods through it.
func PodWithVolumes(p *corev1.Pod, objs VolumeObjects, seen VolumeSet) Pod {
	out := PodFromK8s(p)
	v := VolumesOf(p, objs)
	out.VolumeRequirements = v.Requirements
	if out.Refused == "" {
		out.Refused = v.Refused // a refusal of the pod itself (DRA) comes first
	}
	if seen == nil {
		seen = VolumeSet{}
	}
	out.Requests[resources.EBSVolumes] = seen.Count(v.EBS)
	return out
}

// EBSLimit is a node's EBS attach limit from its CSINode (nil: none yet):
// the EBS CSI driver's allocatable count, or resources.NoLimit when the
// driver has not registered one (the kube-scheduler then enforces none).
func EBSLimit(cn *storagev1.CSINode) int64 {
	if cn != nil {
		for _, d := range cn.Spec.Drivers {
			if d.Name == EBSDriver && d.Allocatable != nil && d.Allocatable.Count != nil {
				return int64(*d.Allocatable.Count)
			}
		}
	}
	return resources.NoLimit
}

// AttachedEBS is the ID (as PodVolumes.EBS) of the volume a
// VolumeAttachment attaches, when the EBS CSI driver attaches it ("" else):
// the kube-scheduler counts attachments no pod on the node uses as well.
func AttachedEBS(va *storagev1.VolumeAttachment) string {
	if va.Spec.Attacher != EBSDriver || va.Spec.Source.PersistentVolumeName == nil {
		return ""
	}
	return "pv/" + *va.Spec.Source.PersistentVolumeName
}
