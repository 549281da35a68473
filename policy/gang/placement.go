package gang

import (
	"fmt"
	"strconv"

	"github.com/joinery/joinery/api/provreq"
)

// ParamPlacement is Joinery's own parameter of the atomic class (not
// upstream's): "cluster" asks for one new cluster placement group for the
// whole gang, created by each try, every node of the try launched into it
// (so in one zone), deleted when the try fails or, once the nodes are
// gone, by the garbage collector.
const ParamPlacement = "joinery.sh/placement"

// PlacementCluster is ParamPlacement's one value.
const PlacementCluster = "cluster"

// Placement is the placement the request asks for ("" none, or
// PlacementCluster); any other value is an error naming the parameter.
func Placement(p *provreq.ProvisioningRequest) (string, error) {
	v, ok := p.Spec.Parameters[ParamPlacement]
	if !ok {
		return "", nil
	}
	if v != PlacementCluster {
		return "", fmt.Errorf("spec.parameters.%s: %q is not supported (Joinery honours %q: one cluster placement group for the gang)",
			ParamPlacement, v, PlacementCluster)
	}
	return v, nil
}

// GroupName is the cluster placement group of one try of a request: the
// cluster, the request's UID (its first 8 characters, as the try's
// workflow id) and the try, so a retried create finds its own group and
// tries never share one. At most 255 characters, as EC2 takes.
func GroupName(cluster, uid string, try int) string {
	name := "joinery-gang-" + uid[:min(8, len(uid))] + "-" + strconv.Itoa(try) + "-" + cluster
	return name[:min(255, len(name))]
}

// ZonePlan is the gang planned in one zone (a cluster group's nodes are
// all in one): whether every pod is placed, and the new nodes' price.
type ZonePlan struct {
	Zone  string
	OK    bool
	Price float64 // per hour, of the new nodes' cheapest offerings
	Nodes int
}

// PickZone is the index of the zone to launch the gang in: of the plans
// that place every pod, the cheapest, then the fewest nodes, then the
// first (zones come sorted); -1 when none places every pod.
func PickZone(plans []ZonePlan) int {
	best := -1
	for i, p := range plans {
		if !p.OK {
			continue
		}
		if best < 0 || p.Price < plans[best].Price || (p.Price == plans[best].Price && p.Nodes < plans[best].Nodes) {
			best = i
		}
	}
	return best
}
