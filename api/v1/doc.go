// Package v1 holds Joinery's view of the Karpenter v1 API: NodePool and
// NodeClaim (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1).
//
// Field names and JSON tags follow Karpenter v1 (kubernetes-sigs/karpenter
// pkg/apis/v1, aws/karpenter-provider-aws pkg/apis/v1) so that YAML written
// for Karpenter decodes unchanged. The types are plain structs: objects are
// read and written through the dynamic client and converted with
// runtime.DefaultUnstructuredConverter, so no generated deep-copy is needed.
package v1

import "k8s.io/apimachinery/pkg/runtime/schema"

// API groups and resources served by the CRDs in deploy/crds.
var (
	NodePoolGVR     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	NodeClaimGVR    = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	EC2NodeClassGVR = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
)
