package disruption

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	apiv1 "github.com/joinery/joinery/api/v1"
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

// NodeClassHash hashes an EC2NodeClass's launch settings: AMI selection,
// subnets, security groups, block devices, user data, metadata options,
// role, tags and kubelet settings.
func NodeClassHash(nc *apiv1.EC2NodeClass) string {
	return hash(nc.Spec)
}

func hash(v interface{}) string {
	b, _ := json.Marshal(v) // plain structs and maps: json sorts map keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
