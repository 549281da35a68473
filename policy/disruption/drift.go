package disruption

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations stamped on a NodeClaim at launch; a differing hash later means
// the node has drifted from its NodePool or EC2NodeClass.
const (
	AnnotationNodePoolHash        = apiv1.AnnotationNodePoolHash
	AnnotationNodePoolHashVersion = apiv1.AnnotationNodePoolHashVersion
	AnnotationNodeClassHash       = "karpenter.k8s.aws/ec2nodeclass-hash"
)

// NodePoolHashVersion names the NodePoolHash function. Bump it whenever
// the hash of an unchanged NodePool changes (a field added to or removed
// from the hash, a new default of a hashed field): NodeClaims stamped with
// another version are not compared (they do not drift), and the drift
// marker re-stamps them with the current hash (HashRestamp). Karpenter's
// own versions are "v1".."v3" over a different hash function, so a
// NodeClaim Karpenter launched is re-stamped too, never drifted by a
// hash it cannot match. History: none (the unversioned hash of labels,
// annotations, taints, startup taints, requirements and nodeClassRef);
// joinery-2: requirements out, expireAfter and terminationGracePeriod in.
const NodePoolHashVersion = "joinery-2"

// NodePoolHash hashes the static fields of a NodePool's template, the ones
// Karpenter hashes for static drift: metadata labels and annotations,
// taints and startup taints (as sets), nodeClassRef, expireAfter (unset:
// apiv1.DefaultExpireAfter; compared as a duration, so 720h and 719h60m
// agree) and terminationGracePeriod. Requirements are not hashed (a node
// drifts on them only when they no longer admit it: RequirementsDrift),
// nor are disruption settings, limits and weight: changing them does not
// make existing nodes wrong.
func NodePoolHash(np *apiv1.NodePool) string {
	t := np.Spec.Template
	exp := t.Spec.ExpireAfter
	if exp == "" {
		exp = apiv1.DefaultExpireAfter
	}
	if d, err := apiv1.ParseNillableDuration(exp); err == nil {
		exp = "Never"
		if d != nil {
			exp = d.String()
		}
	}
	tgp := ""
	if t.Spec.TerminationGracePeriod != nil {
		tgp = t.Spec.TerminationGracePeriod.Duration.String()
	}
	return hash(struct {
		Labels                 map[string]string         `json:"labels,omitempty"`
		Annotations            map[string]string         `json:"annotations,omitempty"`
		Taints                 []taint                   `json:"taints,omitempty"`
		StartupTaints          []taint                   `json:"startupTaints,omitempty"`
		NodeClassRef           *apiv1.NodeClassReference `json:"nodeClassRef,omitempty"`
		ExpireAfter            string                    `json:"expireAfter"`
		TerminationGracePeriod string                    `json:"terminationGracePeriod,omitempty"`
	}{t.ObjectMeta.Labels, t.ObjectMeta.Annotations, taintSet(t.Spec.Taints), taintSet(t.Spec.StartupTaints),
		t.Spec.NodeClassRef, exp, tgp})
}

type taint struct {
	Key    string             `json:"key"`
	Value  string             `json:"value,omitempty"`
	Effect corev1.TaintEffect `json:"effect"`
}

// taintSet is the taints in a fixed order, duplicates dropped: their order
// in the YAML does not matter.
func taintSet(ts []corev1.Taint) []taint {
	seen := map[taint]bool{}
	var out []taint
	for _, t := range ts {
		k := taint{t.Key, t.Value, t.Effect}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		return a.Effect < b.Effect
	})
	return out
}

// NodeClassHash hashes an EC2NodeClass's static launch settings: block
// devices, user data, metadata options, role or profile, AMI family, tags
// and kubelet settings. The selector terms are left out: a node drifts on
// what they resolve to (see Drift), not on how they are written. So is
// ipPrefixCount, as Karpenter's hash ignores it: it only pre-warms the
// CNI, new launches get the new count and running nodes do not drift.
func NodeClassHash(nc *apiv1.EC2NodeClass) string {
	spec := nc.Spec
	spec.SubnetSelectorTerms, spec.SecurityGroupSelectorTerms, spec.AMISelectorTerms = nil, nil, nil
	spec.IPPrefixCount = nil
	return hash(spec)
}

// Drift reasons on the NodeClaim's Drifted condition (Karpenter's names;
// the resolved ones come from nodeclass).
const (
	ReasonNodePoolDrifted     = "NodePoolDrifted"
	ReasonRequirementsDrifted = "RequirementsDrifted"
	ReasonNodeClassDrift      = "NodeClassDrift"
)

// Drift says whether a node drifted from its NodePool or EC2NodeClass, with
// Karpenter's reason and a sentence for people ("", "" : it did not), in
// Karpenter's order: the pool's static fields (StaticDrift), its
// requirements (RequirementsDrift), whether the class still offers the
// node's type, zone and capacity type (InstanceTypeDrift over offered,
// ClassOfferings; nil: not known, no drift), then the class: its static
// hash and what its selectors resolve to (image, subnet, security
// groups). node may be nil; pool nil (gone) or cls nil (gone): nothing to
// compare with.
func Drift(claim *apiv1.NodeClaim, node *corev1.Node, pool *apiv1.NodePool, cls *apiv1.EC2NodeClass, offered Offered, launched nodeclass.Launched) (reason, message string) {
	if pool != nil {
		if StaticDrift(claim, pool) {
			return ReasonNodePoolDrifted, "NodePool " + pool.Name + " template changed"
		}
		if why := RequirementsDrift(claim, node, pool); why != "" {
			return ReasonRequirementsDrifted, why
		}
	}
	if cls == nil {
		return "", ""
	}
	if why := InstanceTypeDrift(claim, offered, cls.Name); why != "" {
		return ReasonInstanceTypeNotFound, why
	}
	if h := claim.Annotations[AnnotationNodeClassHash]; h != "" && h != NodeClassHash(cls) {
		return ReasonNodeClassDrift, "EC2NodeClass " + cls.Name + " changed"
	}
	switch r := nodeclass.DriftReason(launched, cls); r {
	case nodeclass.ReasonAMIDrift:
		return r, "image " + launched.ImageID + " is no longer among EC2NodeClass " + cls.Name + "'s images"
	case nodeclass.ReasonSubnetDrift:
		return r, "subnet " + launched.SubnetID + " is no longer selected by EC2NodeClass " + cls.Name
	case nodeclass.ReasonSecurityGroupDrift:
		return r, "EC2NodeClass " + cls.Name + " selects other security groups"
	case nodeclass.ReasonPlacementGroupDrift:
		return r, "placement group " + strconv.Quote(launched.PlacementGroupID) + " is not EC2NodeClass " + cls.Name + "'s"
	}
	return "", ""
}

// StaticDrift: the NodeClaim's karpenter.sh/nodepool-hash differs from
// the pool's NodePoolHash, both of NodePoolHashVersion. A claim without
// both annotations, or stamped with another version, does not drift
// here (as Karpenter: hashes of different functions say nothing).
func StaticDrift(claim *apiv1.NodeClaim, pool *apiv1.NodePool) bool {
	h, okH := claim.Annotations[AnnotationNodePoolHash]
	v, okV := claim.Annotations[AnnotationNodePoolHashVersion]
	if !okH || !okV || v != NodePoolHashVersion {
		return false
	}
	return h != NodePoolHash(pool)
}

// PoolHashAnnotations is the annotations to write on a NodePool so that it
// says its own hash, as Karpenter's NodePool hash controller writes them:
// karpenter.sh/nodepool-hash (NodePoolHash) and
// karpenter.sh/nodepool-hash-version; nil when the pool already carries
// both. Drift compares a NodeClaim's stamp with NodePoolHash of the pool
// as it is now, the value written here.
func PoolHashAnnotations(pool *apiv1.NodePool) map[string]string {
	h := NodePoolHash(pool)
	if pool.Annotations[AnnotationNodePoolHash] == h && pool.Annotations[AnnotationNodePoolHashVersion] == NodePoolHashVersion {
		return nil
	}
	return map[string]string{AnnotationNodePoolHash: h, AnnotationNodePoolHashVersion: NodePoolHashVersion}
}

// HashRestamp is the annotations to write on a NodeClaim whose
// karpenter.sh/nodepool-hash-version is not NodePoolHashVersion (nil: it
// is, nothing to do), as Karpenter's hash controller does after a hash
// version change: the current version, and the pool's current hash
// unless the claim is already Drifted (it stays drifted: its old hash
// cannot be re-judged).
func HashRestamp(claim *apiv1.NodeClaim, pool *apiv1.NodePool) map[string]string {
	if pool == nil || claim.Annotations[AnnotationNodePoolHashVersion] == NodePoolHashVersion {
		return nil
	}
	out := map[string]string{AnnotationNodePoolHashVersion: NodePoolHashVersion}
	if c := apiv1.FindCondition(claim.Status.Conditions, apiv1.ConditionDrifted); c == nil || c.Status != metav1.ConditionTrue {
		out[AnnotationNodePoolHash] = NodePoolHash(pool)
	}
	return out
}

func hash(v interface{}) string {
	b, _ := json.Marshal(v) // plain structs and maps: json sorts map keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
