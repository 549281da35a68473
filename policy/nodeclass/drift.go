package nodeclass

import (
	"slices"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Annotations recording where a node was launched (the image is the
// NodeClaim's status.imageID).
const (
	AnnotationSubnetID         = "joinery.sh/subnet-id"
	AnnotationSecurityGroupIDs = "joinery.sh/security-group-ids"
)

// LaunchedFrom reads what a NodeClaim records of its launch.
func LaunchedFrom(nc *apiv1.NodeClaim) Launched {
	l := Launched{ImageID: nc.Status.ImageID, SubnetID: nc.Annotations[AnnotationSubnetID],
		PlacementGroupID: nc.Labels[apiv1.LabelPlacementGroupID]}
	if g := nc.Annotations[AnnotationSecurityGroupIDs]; g != "" {
		l.SecurityGroupIDs = strings.Split(g, ",")
	}
	if g := nc.Labels[apiv1.LabelGangPlacementGroup]; g != "" && g == l.PlacementGroupID {
		// Its gang's group, not its class's: nothing to compare.
		l.PlacementGroupID = ""
	}
	return l
}

// Launched is what a node was launched with, recorded on its NodeClaim.
type Launched struct {
	ImageID          string
	SubnetID         string
	SecurityGroupIDs []string
	// PlacementGroupID is the node's placement group label ("" none).
	PlacementGroupID string
}

// Drift reasons, as Karpenter's AWS provider names them.
const (
	ReasonAMIDrift            = "AMIDrift"
	ReasonSubnetDrift         = "SubnetDrift"
	ReasonSecurityGroupDrift  = "SecurityGroupDrift"
	ReasonPlacementGroupDrift = "PlacementGroupDrift"
)

// DriftReason says how a node differs from what its class resolves to now
// ("" : it does not). A class that is not Ready drifts nothing: an outage
// of DescribeImages must not replace the fleet. Facts not recorded at
// launch are not compared.
func DriftReason(l Launched, cls *apiv1.EC2NodeClass) string {
	if NotReady(cls) != "" {
		return ""
	}
	st := cls.Status
	if l.ImageID != "" && !slices.ContainsFunc(st.AMIs, func(a apiv1.AMIStatus) bool { return a.ID == l.ImageID }) {
		return ReasonAMIDrift
	}
	if l.SubnetID != "" && !slices.ContainsFunc(st.Subnets, func(s apiv1.SubnetStatus) bool { return s.ID == l.SubnetID }) {
		return ReasonSubnetDrift
	}
	if len(l.SecurityGroupIDs) > 0 {
		var now []string
		for _, g := range st.SecurityGroups {
			now = append(now, g.ID)
		}
		had := slices.Clone(l.SecurityGroupIDs)
		slices.Sort(had)
		slices.Sort(now)
		if !slices.Equal(had, now) {
			return ReasonSecurityGroupDrift
		}
	}
	// As Karpenter: the node's group label against the class's group, so
	// a group added, removed or resolving to another id drifts the node.
	// Compared once the node is launched (its image recorded with it).
	want := ""
	if st.PlacementGroup != nil {
		want = st.PlacementGroup.ID
	}
	if l.ImageID != "" && l.PlacementGroupID != want {
		return ReasonPlacementGroupDrift
	}
	return ""
}
