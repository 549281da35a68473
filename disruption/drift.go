package disruption

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/nodeclass"
)

// Annotations stamped on a NodeClaim at launch; a differing hash later means
// the node has drifted from its NodePool or EC2NodeClass.
const (
	AnnotationNodePoolHash  = apiv1.AnnotationNodePoolHash
	AnnotationNodeClassHash = "karpenter.k8s.aws/ec2nodeclass-hash"
)

// NodePoolHash hashes what a node is launched from in a NodePool: template
// labels, annotations, taints, startup taints, requirements, nodeClassRef
// and kubelet-visible settings. Disruption settings, limits and weight are
// left out: changing them does not make existing nodes wrong.
func NodePoolHash(np *apiv1.NodePool) string {
	return hash(struct {
		Meta apiv1.ObjectMeta
		Spec apiv1.NodeClaimTemplateSpec
	}{np.Spec.Template.ObjectMeta, apiv1.NodeClaimTemplateSpec{
		Taints: np.Spec.Template.Spec.Taints, StartupTaints: np.Spec.Template.Spec.StartupTaints,
		Requirements: np.Spec.Template.Spec.Requirements, NodeClassRef: np.Spec.Template.Spec.NodeClassRef,
	}})
}

// NodeClassHash hashes an EC2NodeClass's static launch settings: block
// devices, user data, metadata options, role or profile, AMI family, tags
// and kubelet settings. The selector terms are left out: a node drifts on
// what they resolve to (see Drift), not on how they are written.
func NodeClassHash(nc *apiv1.EC2NodeClass) string {
	spec := nc.Spec
	spec.SubnetSelectorTerms, spec.SecurityGroupSelectorTerms, spec.AMISelectorTerms = nil, nil, nil
	return hash(spec)
}

// Drift reasons on the NodeClaim's Drifted condition (Karpenter's names;
// the resolved ones come from nodeclass).
const (
	ReasonNodePoolDrifted = "NodePoolDrifted"
	ReasonNodeClassDrift  = "NodeClassDrift"
)

// Drift says whether a node drifted from its NodePool or EC2NodeClass, with
// Karpenter's reason and a sentence for people ("", "" : it did not). cls
// may be nil (class gone: nothing to compare with).
func Drift(claim *apiv1.NodeClaim, pool *apiv1.NodePool, cls *apiv1.EC2NodeClass, launched nodeclass.Launched) (reason, message string) {
	if h := claim.Annotations[AnnotationNodePoolHash]; h != "" && pool != nil && h != NodePoolHash(pool) {
		return ReasonNodePoolDrifted, "NodePool " + pool.Name + " template changed"
	}
	if cls == nil {
		return "", ""
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
	}
	return "", ""
}

func hash(v interface{}) string {
	b, _ := json.Marshal(v) // plain structs and maps: json sorts map keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
