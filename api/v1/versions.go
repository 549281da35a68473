package v1

import (
	"fmt"
	"strings"
)

// Karpenter's API groups.
const (
	GroupKarpenter = "karpenter.sh"      // NodePool, NodeClaim
	GroupAWS       = "karpenter.k8s.aws" // EC2NodeClass
)

// OlderVersion says how to bring an object of an API version of
// Karpenter's groups other than v1 to v1, as advice to append to
// "<apiVersion> <kind> <name>: " (false when apiVersion is not one of
// Karpenter's groups, is v1, or is the current karpenter.sh/v1alpha1
// NodeOverlay). file is the manifest the object came from,
// named in the command it suggests ("" writes FILE).
//
// karpenter.sh/v1beta1 and karpenter.k8s.aws/v1beta1 convert with `starter
// migrate`; the v1alpha5 Provisioner and Machine and the v1alpha1
// AWSNodeTemplate convert to v1beta1 first (Karpenter's karpenter-convert).
func OlderVersion(apiVersion, kind, file string) (string, bool) {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || (group != GroupKarpenter && group != GroupAWS) || version == "v1" ||
		(group == GroupKarpenter && version == "v1alpha1" && kind == "NodeOverlay") {
		return "", false
	}
	if file == "" {
		file = "FILE"
	}
	migrate := fmt.Sprintf("`starter migrate -f %s`", file)
	switch {
	case version == "v1beta1" && kind == "NodeClaim":
		return "NodeClaims are created by the controller, not applied: remove it from the manifests", true
	case version == "v1beta1":
		return "convert it with " + migrate + " (Joinery serves " + group + "/v1)", true
	case version == "v1alpha5" || version == "v1alpha1":
		return "convert it to v1beta1 first (Karpenter's karpenter-convert), then with " + migrate, true
	}
	return "not a served version: Joinery serves " + group + "/v1", true
}
