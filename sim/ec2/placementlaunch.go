package ec2

import (
	"fmt"
	"net/http"
	"strconv"
)

// Launches into a placement group: the template's Placement names it, the
// override's type must suit the strategy, and the group's rules hold at
// each launch (a cluster group stays in one zone; a spread group holds
// SpreadGroupZoneLimit instances per zone; a partition is one of the
// group's).

// placement reads a launch template's Placement.GroupName / GroupId /
// PartitionNumber. Whether the group exists is checked at launch, as EC2
// does for the resources a template names.
func placement(f form, p string, d *LaunchTemplateData) error {
	pp := p + ".Placement"
	d.PlacementGroupName, d.PlacementGroupID = f.get(pp+".GroupName"), f.get(pp+".GroupId")
	if d.PlacementGroupName != "" && d.PlacementGroupID != "" {
		return newError(http.StatusBadRequest, CodeInvalidParameterCombination,
			"The parameter groupName cannot be used with the parameter groupId.")
	}
	v := f.get(pp + ".PartitionNumber")
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return invalidParameter("Value (%s) for parameter partitionNumber is invalid.", v)
	}
	if d.PlacementGroupName == "" && d.PlacementGroupID == "" {
		return newError(http.StatusBadRequest, CodeInvalidParameterCombination,
			"A partition number can only be specified with a partition placement group.")
	}
	d.PartitionNumber = n
	return nil
}

// checkPlacementLocked records on o EC2's refusal of the template's group
// whatever the capacity: a group that does not exist, a type cluster
// groups do not take, a partition number the group does not have.
func (s *Server) checkPlacementLocked(o *fleetOverride) {
	d := &o.lt.Data
	want := d.PlacementGroupID
	if want == "" {
		want = d.PlacementGroupName
	}
	if want == "" {
		return
	}
	g := s.placementGroupLocked(want)
	if g == nil || (d.PlacementGroupID != "" && g.ID != want) || (d.PlacementGroupName != "" && g.Name != want) {
		o.fail(CodeInvalidPlacementGroupUnknown, unknownPlacementGroup(want).Message)
		return
	}
	switch {
	case g.Strategy == PlacementStrategyCluster && o.it != nil && !o.it.SupportsPlacement(PlacementStrategyCluster):
		o.fail(CodeInvalidParameterCombination, clusterTypeUnsupported(o.it.Name))
	case d.PartitionNumber != 0 && g.Strategy != PlacementStrategyPartition:
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("Partition number can only be specified for a partition placement group; '%s' is a %s placement group.", g.Name, g.Strategy))
	case d.PartitionNumber > g.PartitionCount && g.Strategy == PlacementStrategyPartition:
		o.fail(CodeInvalidParameterValue, fmt.Sprintf("Value (%d) for parameter partitionNumber is invalid. Placement group '%s' has %d partitions.",
			d.PartitionNumber, g.Name, g.PartitionCount))
	default:
		o.group = g
	}
}

// placementRoomLocked is the group's refusal of one more instance in the
// override's zone now ("" when it takes it): a cluster group whose
// instances are in another zone, a spread group full in this one. Counted
// per launch, so one request may fill a spread group.
func (s *Server) placementRoomLocked(o *fleetOverride) (code, msg string) {
	g := o.group
	if g == nil {
		return "", ""
	}
	switch g.Strategy {
	case PlacementStrategyCluster:
		for _, in := range s.groupInstancesLocked(g, "") {
			if in.Zone != o.subnet.zone {
				return CodeInvalidPlacementGroupInUse, fmt.Sprintf("The placement group '%s' is in use in another availability zone: %s", g.Name, in.Zone)
			}
		}
	case PlacementStrategySpread:
		if len(s.groupInstancesLocked(g, o.subnet.zone)) >= SpreadGroupZoneLimit {
			return CodeInsufficientInstanceCapacity, spreadLimitMessage
		}
	}
	return "", ""
}

// joinGroupLocked puts a new instance in the override's group: the
// template's partition, else the zone's least used one (lowest first).
func (s *Server) joinGroupLocked(o *fleetOverride, in *instance) {
	g := o.group
	if g == nil {
		return
	}
	in.PlacementGroupName, in.PlacementGroupID = g.Name, g.ID
	if g.Strategy != PlacementStrategyPartition {
		return
	}
	if in.PartitionNumber = o.lt.Data.PartitionNumber; in.PartitionNumber != 0 {
		return
	}
	used := map[int]int{}
	for _, other := range s.groupInstancesLocked(g, in.Zone) {
		used[other.PartitionNumber]++
	}
	in.PartitionNumber = 1
	for p := 2; p <= g.PartitionCount; p++ {
		if used[p] < used[in.PartitionNumber] {
			in.PartitionNumber = p
		}
	}
}
