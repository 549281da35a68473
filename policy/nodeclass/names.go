package nodeclass

import (
	"encoding/json"

	"fmt"
	apiv1 "github.com/joinery/joinery/api/v1"
	"hash/fnv"
)

// InstanceProfileName is the instance profile Joinery creates for a class's
// spec.role: named by cluster, region, class uid and role, so a new role
// or a re-created class gets a new profile and the old one can be removed
// once no node uses it. IAM allows 128 characters; this is at most 17
// more than the cluster name.
func InstanceProfileName(cluster, region, classUID, role string) string {
	return fmt.Sprintf("%s_%016x", cluster, sum(region, classUID, role))
}

// InstanceProfilePath scopes the profiles of one cluster and class, so the
// IAM policy can be written per cluster and a class's profiles listed.
func InstanceProfilePath(cluster, region, classUID string) string {
	return fmt.Sprintf("/joinery/%s/%s/%s/", region, cluster, classUID)
}

// LaunchTemplateName names a launch template by its content: any input
// that changes the template (image, user data, groups, profile, devices,
// metadata options, tags) gives a new name, so a template is never edited
// under a running launch.
func LaunchTemplateName(cluster string, content any) (string, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("launch template content: %w", err)
	}
	return fmt.Sprintf("joinery/%s/%016x", cluster, sum(string(b))), nil
}

func sum(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// Tags Joinery puts on what it creates for a class, beside the cluster tag.
const (
	TagNodeClass      = "karpenter.k8s.aws/ec2nodeclass"
	TagEKSClusterName = "eks:eks-cluster-name"
)

// OwnershipTags mark a resource as this cluster's and this class's; the IAM
// policy's conditions rely on them.
func OwnershipTags(cluster, class string) map[string]string {
	return map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned",
		TagEKSClusterName:                  cluster,
		apiv1.TagCluster:                   cluster,
		TagNodeClass:                       class,
	}
}
