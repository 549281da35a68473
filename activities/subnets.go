package activities

import (
	"context"
	"sort"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/solver"
)

// subnetRefresh is how long free-address counts from DescribeSubnets are
// trusted; in between, this worker's own launches are subtracted.
const subnetRefresh = time.Minute

// subnetPicker chooses, per zone, the subnet with the most free addresses
// minus those this worker launched into since the last DescribeSubnets, as
// Karpenter does. Launches of other replicas are seen at the next refresh.
type subnetPicker struct {
	mu      sync.Mutex
	byClass map[string]*subnetState
}

type subnetState struct {
	at       time.Time
	subnets  []aws.Subnet
	inFlight map[string]int32
}

// choose returns zone -> subnet id over the class's resolved subnets.
func (p *subnetPicker) choose(ctx context.Context, c *aws.Client, cls *apiv1.EC2NodeClass) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byClass == nil {
		p.byClass = map[string]*subnetState{}
	}
	st := p.byClass[cls.Name]
	if st == nil || time.Since(st.at) > subnetRefresh {
		sns, err := c.Subnets(ctx, cls.Spec.SubnetSelectorTerms)
		if err != nil {
			return nil, err
		}
		st = &subnetState{at: time.Now(), subnets: sns, inFlight: map[string]int32{}}
		p.byClass[cls.Name] = st
	}
	resolved := map[string]bool{}
	for _, s := range cls.Status.Subnets {
		resolved[s.ID] = true
	}
	best := map[string]string{}
	free := map[string]int32{}
	for _, s := range st.subnets {
		if !resolved[s.ID] {
			continue
		}
		n := s.AvailableIPs - st.inFlight[s.ID]
		if cur, ok := best[s.Zone]; !ok || n > free[s.Zone] || (n == free[s.Zone] && s.ID < cur) {
			best[s.Zone], free[s.Zone] = s.ID, n
		}
	}
	return best, nil
}

// used counts one launch into a subnet until the next refresh.
func (p *subnetPicker) used(class, subnet string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.byClass[class]; st != nil && subnet != "" {
		st.inFlight[subnet]++
	}
}

// zonesOf lists the zones of a class's resolved subnets, sorted.
func zonesOf(cls *apiv1.EC2NodeClass) []string {
	seen := map[string]bool{}
	var zones []string
	for _, s := range cls.Status.Subnets {
		if !seen[s.Zone] {
			seen[s.Zone] = true
			zones = append(zones, s.Zone)
		}
	}
	sort.Strings(zones)
	return zones
}

// launchable keeps the instance types some image of the class serves, so
// the solver never plans a node no launch template could boot.
func launchable(types []solver.InstanceTypeOption, cls *apiv1.EC2NodeClass) []solver.InstanceTypeOption {
	out := types[:0:0]
	for _, t := range types {
		if _, ok := nodeclass.AMIFor(cls.Status.AMIs, t.Type.Labels()); ok {
			out = append(out, t)
		}
	}
	return out
}
