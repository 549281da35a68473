package nodeclass

import (
	"slices"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// ClusterZone is the zone a cluster placement group launches in: EC2
// keeps the group's instances in one zone (InvalidPlacementGroup.InUse in
// another), so it is the zone of the group's instances (running: zones,
// sorted) when it has some; while it has none, the zone already chosen
// for the same group (prev) if the class still has subnets there, else
// the class's first zone by name. Planning every node of the class in
// that zone keeps concurrent launches from splitting an empty group.
func ClusterZone(running []string, subnets []apiv1.SubnetStatus, groupID string, prev *apiv1.PlacementGroupStatus) string {
	if len(running) > 0 {
		return running[0]
	}
	var zones []string
	for _, s := range subnets {
		zones = append(zones, s.Zone)
	}
	slices.Sort(zones)
	if prev != nil && prev.ID == groupID && slices.Contains(zones, prev.Zone) {
		return prev.Zone
	}
	if len(zones) == 0 {
		return ""
	}
	return zones[0]
}

// LaunchZones narrows the class's zones to its cluster placement group's
// zone (unchanged for a class without one).
func LaunchZones(cls *apiv1.EC2NodeClass, zones []string) []string {
	pg := cls.Status.PlacementGroup
	if pg == nil || pg.Strategy != apiv1.PlacementStrategyCluster || pg.Zone == "" {
		return zones
	}
	if slices.Contains(zones, pg.Zone) {
		return []string{pg.Zone}
	}
	return nil
}
