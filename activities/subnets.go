package activities

import (
	"context"
	"sort"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/policy/subnets"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/solver"
)

// subnetRefresh is how long free-address counts from DescribeSubnets are
// trusted; in between, this worker's own launches are subtracted.
const subnetRefresh = time.Minute

// subnetUnavailableFor is how long a subnet that answered
// InsufficientFreeAddressesInSubnet is left out (Karpenter v1.13's 3 min).
const subnetUnavailableFor = 3 * time.Minute

// subnetPicker chooses, per zone, the subnet with the most free addresses
// minus those predicted for this worker's launches since the last
// DescribeSubnets, as Karpenter does. Launches of other replicas are seen
// at the next refresh.
type subnetPicker struct {
	mu          sync.Mutex
	byClass     map[string]*subnetState
	unavailable map[string]time.Time // subnet id -> left out until
}

type subnetState struct {
	at       time.Time
	subnets  []aws.Subnet
	inFlight map[string]int32
}

// choose returns zone -> subnet id over the class's resolved subnets that
// are not left out.
func (p *subnetPicker) choose(ctx context.Context, c *aws.Client, cls *apiv1.EC2NodeClass) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, err := p.stateLocked(ctx, c, cls)
	if err != nil {
		return nil, err
	}
	resolved := map[string]bool{}
	for _, s := range cls.Status.Subnets {
		resolved[s.ID] = true
	}
	var cands []subnets.Subnet
	for _, s := range st.subnets {
		if resolved[s.ID] && !p.leftOutLocked(s.ID) {
			cands = append(cands, subnets.Subnet{ID: s.ID, Zone: s.Zone, Free: int(s.AvailableIPs - st.inFlight[s.ID])})
		}
	}
	ids := map[string]string{}
	for zone, s := range subnets.PickPerZone(cands) {
		ids[zone] = s.ID
	}
	return ids, nil
}

// addressNeed is the addresses a node of one offering would take in its zone.
type addressNeed struct {
	Zone string
	Need int
}

// fit keeps the offerings whose node the zone's chosen subnet can hold,
// net of launches in flight, and reserves in each zone's subnet the most a
// kept offering there needs, all under one lock so concurrent launches
// never count the same addresses twice. It returns which needs fit, the
// free addresses per zone before the reservation, and the reservation
// (subnet id -> addresses). Without described subnets every need fits.
func (p *subnetPicker) fit(class string, chosen map[string]string, needs []addressNeed) ([]bool, map[string]int, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fits := make([]bool, len(needs))
	free, reserved := map[string]int{}, map[string]int{}
	st := p.byClass[class]
	for zone, id := range chosen {
		for _, s := range st.subnetsOrNil() {
			if s.ID == id {
				free[zone] = int(s.AvailableIPs - st.inFlight[id])
			}
		}
	}
	for i, n := range needs {
		f, known := free[n.Zone]
		fits[i] = !known || subnets.Holds(f, n.Need)
		if fits[i] && known {
			reserved[chosen[n.Zone]] = max(reserved[chosen[n.Zone]], n.Need)
		}
	}
	for id, n := range reserved {
		st.inFlight[id] += int32(n)
	}
	return fits, free, reserved
}

func (st *subnetState) subnetsOrNil() []aws.Subnet {
	if st == nil {
		return nil
	}
	return st.subnets
}

func (p *subnetPicker) stateLocked(ctx context.Context, c *aws.Client, cls *apiv1.EC2NodeClass) (*subnetState, error) {
	if p.byClass == nil {
		p.byClass = map[string]*subnetState{}
	}
	st := p.byClass[cls.Name]
	if st != nil && time.Since(st.at) <= subnetRefresh {
		return st, nil
	}
	sns, err := c.Subnets(ctx, cls.Spec.SubnetSelectorTerms)
	if err != nil {
		return nil, err
	}
	st = &subnetState{at: time.Now(), subnets: sns, inFlight: map[string]int32{}}
	p.byClass[cls.Name] = st
	return st, nil
}

func (p *subnetPicker) leftOutLocked(id string) bool {
	until, ok := p.unavailable[id]
	if ok && time.Now().After(until) {
		delete(p.unavailable, id)
		return false
	}
	return ok
}

// settle ends a launch's reservation (fit's): what it reserved goes back,
// and the subnet it launched into ("" for none) keeps need addresses in
// flight until the next refresh.
func (p *subnetPicker) settle(class string, reserved map[string]int, launched string, need int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.byClass[class]
	if st == nil {
		return
	}
	for id, n := range reserved {
		st.inFlight[id] = max(0, st.inFlight[id]-int32(n))
	}
	if launched != "" {
		st.inFlight[launched] += int32(need)
	}
}

// leaveOut keeps a subnet out of launches for subnetUnavailableFor, as
// after InsufficientFreeAddressesInSubnet, and counts it as full until
// the next refresh.
func (p *subnetPicker) leaveOut(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unavailable == nil {
		p.unavailable = map[string]time.Time{}
	}
	p.unavailable[id] = time.Now().Add(subnetUnavailableFor)
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
	return nodeclass.LaunchZones(cls, zones)
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
