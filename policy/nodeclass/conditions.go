package nodeclass

import (
	"errors"
	"fmt"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Resolution is what one reconcile of an EC2NodeClass found: each part's
// resolved values, or the error that stopped it.
type Resolution struct {
	Subnets            []apiv1.SubnetStatus
	SubnetsErr         error
	SecurityGroups     []apiv1.SecurityGroupStatus
	SecurityGroupsErr  error
	AMIs               []apiv1.AMIStatus
	AMIsErr            error
	InstanceProfile    string
	InstanceProfileErr error
	// CapacityReservations are the selected reservations (SelectReservations);
	// CapacityReservationsErr the DescribeCapacityReservations failure, which
	// makes CapacityReservationsReady (and Ready) False.
	CapacityReservations    []apiv1.CapacityReservationStatus
	CapacityReservationsErr error
	// PlacementGroupSelector is the class's selector (nil: none);
	// PlacementGroup what it resolved to (nil: EC2 has no such group),
	// PlacementGroupErr the DescribePlacementGroups failure.
	PlacementGroupSelector *apiv1.PlacementGroupSelector
	PlacementGroup         *apiv1.PlacementGroupStatus
	PlacementGroupErr      error
	// Unsupported are the set fields Joinery does not honour
	// (Unsupported): ValidationSucceeded is False naming them, and so is
	// Ready.
	Unsupported []string
}

// Status turns a resolution into the class's status, keeping each
// condition's transition time when its status did not change.
func Status(old []metav1.Condition, r Resolution, generation int64, now metav1.Time) apiv1.EC2NodeClassStatus {
	parts := []metav1.Condition{
		part(apiv1.ConditionSubnetsReady, len(r.Subnets) > 0, r.SubnetsErr, "SubnetsNotFound", "no subnet matches subnetSelectorTerms"),
		part(apiv1.ConditionSecurityGroupsReady, len(r.SecurityGroups) > 0, r.SecurityGroupsErr, "SecurityGroupsNotFound", "no security group matches securityGroupSelectorTerms"),
		part(apiv1.ConditionAMIsReady, len(r.AMIs) > 0, r.AMIsErr, "AMINotFound", "no image matches amiSelectorTerms"),
		part(apiv1.ConditionInstanceProfileReady, r.InstanceProfile != "", r.InstanceProfileErr, "InstanceProfileNotFound", "no instance profile: set spec.role or spec.instanceProfile"),
		part(apiv1.ConditionCapacityReservationsReady, true, r.CapacityReservationsErr, "", ""),
		placementGroupPart(r),
	}
	if len(r.Unsupported) > 0 {
		parts = append(parts, metav1.Condition{Type: apiv1.ConditionValidationSucceeded, Status: metav1.ConditionFalse,
			Reason: "UnsupportedField", Message: unsupportedMessage(r.Unsupported)})
	}
	ready := metav1.Condition{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}
	for _, c := range parts {
		if c.Status != metav1.ConditionTrue {
			ready.Status, ready.Reason = metav1.ConditionFalse, c.Reason
			ready.Message = fmt.Sprintf("%s=False: %s", c.Type, c.Message)
			break
		}
	}
	conds := append(parts, ready)
	for i := range conds {
		conds[i].ObservedGeneration = generation
		conds[i].LastTransitionTime = now
		if prev := apiv1.FindCondition(old, conds[i].Type); prev != nil && prev.Status == conds[i].Status {
			conds[i].LastTransitionTime = prev.LastTransitionTime
		}
	}
	st := apiv1.EC2NodeClassStatus{
		Subnets: r.Subnets, SecurityGroups: r.SecurityGroups, AMIs: r.AMIs,
		InstanceProfile: r.InstanceProfile, Conditions: conds, CapacityReservations: r.CapacityReservations,
		PlacementGroup: r.PlacementGroup,
	}
	return st
}

// placementGroupPart is PlacementGroupReady with Karpenter's reasons.
func placementGroupPart(r Resolution) metav1.Condition {
	c := metav1.Condition{Type: apiv1.ConditionPlacementGroupReady, Status: metav1.ConditionTrue, Reason: apiv1.ConditionPlacementGroupReady}
	sel := r.PlacementGroupSelector
	switch {
	case sel == nil:
	case r.PlacementGroupErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "PlacementGroupResolutionFailed", r.PlacementGroupErr.Error()
	case r.PlacementGroup == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "PlacementGroupNotFound", fmt.Sprintf("Placement group %q not found", SelectorValue(sel))
	}
	return c
}

// SelectorValue is the name or id a placement group selector asks for.
func SelectorValue(sel *apiv1.PlacementGroupSelector) string {
	if sel.Name != nil {
		return *sel.Name
	}
	if sel.ID != nil {
		return *sel.ID
	}
	return ""
}

func part(typ string, found bool, err error, notFound, notFoundMsg string) metav1.Condition {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ}
	var unsupported ErrUnsupportedAlias
	switch {
	case errors.As(err, &unsupported):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "UnsupportedAlias", err.Error()
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ResolutionFailed", err.Error()
	case !found:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, notFound, notFoundMsg
	}
	return c
}

// NotReady says why a class cannot launch ("" when it can): the first
// condition that is not True, or that the status is older than the spec.
//
// A class that sets fields Joinery does not honour (Unsupported) is not
// ready whatever its status says.
func NotReady(cls *apiv1.EC2NodeClass) string {
	if why := Refused(cls); why != "" {
		return why
	}
	ready := apiv1.FindCondition(cls.Status.Conditions, apiv1.ConditionReady)
	switch {
	case ready == nil:
		return fmt.Sprintf("EC2NodeClass %s not resolved yet", cls.Name)
	case ready.Status != metav1.ConditionTrue:
		return fmt.Sprintf("EC2NodeClass %s not Ready: %s", cls.Name, ready.Message)
	case ready.ObservedGeneration < cls.Generation:
		return fmt.Sprintf("EC2NodeClass %s changed (generation %d) and is not resolved yet", cls.Name, cls.Generation)
	}
	return ""
}
