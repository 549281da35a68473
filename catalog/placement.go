package catalog

import "strings"

// Placement group strategies (EC2's PlacementGroupInfo.SupportedStrategies).
const (
	PlacementCluster   = "cluster"
	PlacementPartition = "partition"
	PlacementSpread    = "spread"
)

// PlacementStrategies are the placement group strategies EC2 launches the
// type into. AWS's rules: cluster groups take current generation types
// except the burstable ones (T2, T3, T3a, T4g), Mac instances and the
// flex types (M7i-flex, C7i-flex); partition and spread groups take any
// type the catalog holds.
func (it *InstanceType) PlacementStrategies() []string {
	if it.clusterUnsupported() {
		return []string{PlacementPartition, PlacementSpread}
	}
	return []string{PlacementCluster, PlacementPartition, PlacementSpread}
}

// SupportsPlacement reports whether the type launches into a group of the
// strategy ("" asks for no group: always).
func (it *InstanceType) SupportsPlacement(strategy string) bool {
	return strategy != PlacementCluster || !it.clusterUnsupported()
}

func (it *InstanceType) clusterUnsupported() bool {
	return it.Category == "t" || strings.HasPrefix(it.Family, "mac") || strings.HasSuffix(it.Family, "-flex")
}
