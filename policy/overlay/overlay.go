// Package overlay applies Karpenter's NodeOverlays (karpenter.sh/v1alpha1)
// to the solver's NodePools: an offering's price, and extended resources a
// type's nodes carry, as the overlays selecting them say. It is pure.
//
// Karpenter's rules (kubernetes-sigs/karpenter pkg/controllers/nodeoverlay):
// overlays are taken by weight, highest first, then by name, later in the
// alphabet first. An overlay selects an instance type of a NodePool when
// its requirements are compatible with the labels a node would have (the
// type's, karpenter.sh/nodepool, the template labels), and of that type the
// offerings its zone and capacity-type requirements admit. The first
// overlay with a price to select an offering sets it; capacity is merged,
// a higher weight winning per resource. An overlay that would set what an
// overlay of the same weight already set conflicts and is not applied at
// all (ValidationSucceeded=False, reason Conflict); an invalid one neither
// (reason RuntimeValidation).
package overlay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// Verdict is why an overlay is not applied.
type Verdict struct{ Reason, Message string }

// Set is the overlays in force, in the order they apply.
type Set struct {
	active []*v1alpha1.NodeOverlay
	// Rejected are the overlays not applied, by name.
	Rejected map[string]Verdict
	// Unmodelled are capacity resources Joinery's solver does not track
	// ("overlay NAME: capacity RESOURCE ..."): the overlay applies without them.
	Unmodelled []string
}

// Resolve orders the overlays and sets aside the invalid and conflicting
// ones, checked against every pool's types and offerings.
func Resolve(overlays []*v1alpha1.NodeOverlay, pools []solver.NodePool) *Set {
	s := &Set{Rejected: map[string]Verdict{}}
	ordered := slices.Clone(overlays)
	slices.SortStableFunc(ordered, func(a, b *v1alpha1.NodeOverlay) int {
		if wa, wb := a.WeightOrZero(), b.WeightOrZero(); wa != wb {
			return int(wb - wa)
		}
		return strings.Compare(b.Name, a.Name)
	})
	setBy := claims{}
	for _, o := range ordered {
		if errs := o.Validate(); len(errs) > 0 {
			s.Rejected[o.Name] = Verdict{v1alpha1.ReasonRuntimeValidation, errs.ToAggregate().Error()}
			continue
		}
		if other, what := setBy.conflict(o, pools); other != "" {
			s.Rejected[o.Name] = Verdict{v1alpha1.ReasonConflict, fmt.Sprintf("conflict with another overlay: %s, of the same weight, already sets %s", other, what)}
			continue
		}
		setBy.take(o, pools)
		s.active = append(s.active, o)
		for name := range o.Spec.Capacity {
			if !modelled(name) {
				s.Unmodelled = append(s.Unmodelled, fmt.Sprintf("overlay %s: capacity %s is not a resource Joinery plans for (it plans %s); the rest of the overlay applies",
					o.Name, name, strings.Join(extendedNames(), ", ")))
			}
		}
	}
	slices.Sort(s.Unmodelled)
	return s
}

// Active names the overlays applied, in order.
func (s *Set) Active() []string {
	var out []string
	for _, o := range s.active {
		out = append(out, o.Name)
	}
	return out
}

// Apply sets each pool's offering prices and adds extended capacity to its
// types' shapes.
func (s *Set) Apply(pools []solver.NodePool) {
	if s == nil || len(s.active) == 0 {
		return
	}
	for p := range pools {
		pool := &pools[p]
		for t := range pool.InstanceTypes {
			it := &pool.InstanceTypes[t]
			for i := range it.Offerings {
				o := &it.Offerings[i]
				o.Price = s.Price(pool, it.Type, o.Zone, o.CapacityType, o.Price)
			}
			s.addCapacity(pool, it)
		}
	}
}

// Price is the price of a type's offering in a pool after the overlays
// (base: its price before them); also for the pool's existing nodes.
func (s *Set) Price(pool *solver.NodePool, it *catalog.InstanceType, zone, capacityType string, base float64) float64 {
	if s == nil {
		return base
	}
	labels := nodeLabels(pool, it)
	for _, o := range s.active {
		change := priceChange(o)
		if change == "" || !typeMatches(o, labels) || !offeringMatches(o, zone, capacityType) {
			continue
		}
		return Adjusted(base, change)
	}
	return base
}

// Overlaid reports whether an overlay sets the price of the type's
// offering in the pool.
func (s *Set) Overlaid(pool *solver.NodePool, it *catalog.InstanceType, zone, capacityType string) bool {
	if s == nil {
		return false
	}
	labels := nodeLabels(pool, it)
	for _, o := range s.active {
		if priceChange(o) != "" && typeMatches(o, labels) && offeringMatches(o, zone, capacityType) {
			return true
		}
	}
	return false
}

func (s *Set) addCapacity(pool *solver.NodePool, it *solver.InstanceTypeOption) {
	labels := nodeLabels(pool, it.Type)
	set := map[corev1.ResourceName]bool{}
	for _, o := range s.active {
		if len(o.Spec.Capacity) == 0 || !typeMatches(o, labels) || !anyOffering(o, it.Offerings) {
			continue
		}
		for name, q := range o.Spec.Capacity {
			if !modelled(name) || set[name] {
				continue
			}
			i := resources.IndexOf(name)
			set[name] = true
			it.Shape.Capacity[i] = q.Value()
			it.Shape.Allocatable[i] = q.Value()
		}
	}
}

// Adjusted is a price after a change: an absolute price ("0.5"), a signed
// amount ("-0.05") or a signed percentage ("-30%"); never below 0.
func Adjusted(price float64, change string) float64 {
	if change == "" {
		return price
	}
	if !strings.HasPrefix(change, "+") && !strings.HasPrefix(change, "-") {
		v, err := strconv.ParseFloat(change, 64)
		if err != nil {
			return price
		}
		return v
	}
	var out float64
	if pct, ok := strings.CutSuffix(change, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return price
		}
		out = price * (1 + v/100)
	} else {
		v, err := strconv.ParseFloat(change, 64)
		if err != nil {
			return price
		}
		out = price + v
	}
	return max(out, 0)
}

func priceChange(o *v1alpha1.NodeOverlay) string {
	switch {
	case o.Spec.Price != nil:
		return *o.Spec.Price
	case o.Spec.PriceAdjustment != nil:
		return *o.Spec.PriceAdjustment
	}
	return ""
}

// nodeLabels are the labels a node of the type in the pool would have,
// offering labels aside: the type's, the pool's name and template labels,
// and the values its requirements fix.
func nodeLabels(pool *solver.NodePool, it *catalog.InstanceType) map[string]string {
	l := it.Labels()
	for _, r := range pool.Requirements {
		if r.Operator == apiv1.OpIn && len(r.Values) == 1 && !isOfferingKey(r.Key) {
			l[r.Key] = r.Values[0]
		}
	}
	for k, v := range pool.Labels {
		l[k] = v
	}
	l[apiv1.LabelNodePool] = pool.Name
	return l
}

func isOfferingKey(k string) bool { return k == apiv1.LabelZone || k == apiv1.LabelCapacityType }

func typeMatches(o *v1alpha1.NodeOverlay, labels map[string]string) bool {
	for _, r := range o.Spec.Requirements {
		if isOfferingKey(r.Key) {
			continue
		}
		v, has := labels[r.Key]
		if !r.Matches(v, has) {
			return false
		}
	}
	return true
}

func offeringMatches(o *v1alpha1.NodeOverlay, zone, capacityType string) bool {
	for _, r := range o.Spec.Requirements {
		switch r.Key {
		case apiv1.LabelZone:
			if !r.Matches(zone, true) {
				return false
			}
		case apiv1.LabelCapacityType:
			if !r.Matches(capacityType, true) {
				return false
			}
		}
	}
	return true
}

func anyOffering(o *v1alpha1.NodeOverlay, offs []catalog.Offering) bool {
	for _, off := range offs {
		if offeringMatches(o, off.Zone, off.CapacityType) {
			return true
		}
	}
	return false
}

func extendedNames() []string {
	var out []string
	for i := resources.NvidiaGPU; i < resources.Count; i++ {
		if i != resources.EBSVolumes {
			out = append(out, string(resources.Names[i]))
		}
	}
	return out
}

// modelled reports an extended resource the solver tracks.
func modelled(name corev1.ResourceName) bool {
	i := resources.IndexOf(name)
	return i >= resources.NvidiaGPU && i != resources.EBSVolumes
}
