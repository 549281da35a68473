package activities

import (
	"strings"

	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/workflows"
)

func launchedAnnotations(i workflows.Instance) map[string]string {
	out := map[string]string{}
	if i.SubnetID != "" {
		out[nodeclass.AnnotationSubnetID] = i.SubnetID
	}
	if len(i.SecurityGroupIDs) > 0 {
		out[nodeclass.AnnotationSecurityGroupIDs] = strings.Join(i.SecurityGroupIDs, ",")
	}
	return out
}
