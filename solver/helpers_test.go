package solver

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// poolYAML builds a solver NodePool from a karpenter.sh/v1 NodePool YAML
// over the real catalog, default node class, three zones.
func poolYAML(t testing.TB, y string) NodePool {
	t.Helper()
	np := &apiv1.NodePool{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(y, "\t", "  ")), np); err != nil {
		t.Fatalf("NodePool YAML: %v", err)
	}
	p := NodePoolFromAPI(np, nil, catalog.MustDefault(), catalog.DefaultZones, nil)
	if len(p.InstanceTypes) == 0 {
		t.Fatalf("NodePool %s has no instance types", np.Name)
	}
	return p
}

// pod makes a pod with cpu in millicores and memory in MiB.
func pod(name string, cpuMilli, memMiB int64) Pod {
	var r resources.List
	r[resources.CPU], r[resources.Memory], r[resources.Pods] = cpuMilli, memMiB<<20, 1
	return Pod{Namespace: "default", Name: name, Requests: r, CreationUnix: 1_700_000_000}
}

func pods(prefix string, n int, cpuMilli, memMiB int64) []Pod {
	out := make([]Pod, n)
	for i := range out {
		out[i] = pod(prefix+"-"+string(rune('a'+i/26))+string(rune('a'+i%26)), cpuMilli, memMiB)
	}
	return out
}

// zoneSpread is a pod's one zone topology spread constraint, maxSkew 1,
// over the pods sel selects.
func zoneSpread(when corev1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: when, LabelSelector: sel}}
}

func tol(key, value string, effect corev1.TaintEffect) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: effect}
}

// claimOf returns the new claim holding the pod, or nil.
func claimOf(plan *Plan, key string) *NewNodeClaim {
	for i := range plan.NewNodeClaims {
		for _, p := range plan.NewNodeClaims[i].Pods {
			if p == key {
				return &plan.NewNodeClaims[i]
			}
		}
	}
	return nil
}

func unschedulable(plan *Plan, key string) (string, bool) {
	for _, u := range plan.Unschedulable {
		if u.Pod == key {
			return u.Reason, true
		}
	}
	return "", false
}

// checkPlanInvariants asserts what every plan must satisfy: each pod placed
// exactly once; every claim's types hold its requests (incl. daemonset
// overhead) and are sorted by cheapest offering, with only available
// offerings meeting the claim's requirements; no pool limit exceeded when
// each claim is counted by its largest listed capacity.
func checkPlanInvariants(t *testing.T, in Input, plan *Plan) {
	t.Helper()
	seen := map[string]int{}
	for _, p := range plan.ExistingPlacements {
		seen[p.Pod]++
	}
	for _, u := range plan.Unschedulable {
		seen[u.Pod]++
		if u.Reason == "" {
			t.Errorf("pod %s unschedulable without a reason", u.Pod)
		}
	}
	usage := map[string]resources.List{}
	nodes := map[string]int{}
	for i := range plan.NewNodeClaims {
		nc := &plan.NewNodeClaims[i]
		for _, p := range nc.Pods {
			seen[p]++
		}
		if len(nc.InstanceTypes) == 0 || len(nc.InstanceTypes) > MaxInstanceTypes {
			t.Fatalf("claim %d has %d instance types", i, len(nc.InstanceTypes))
		}
		var maxCap resources.List
		prev := -1.0
		for _, o := range nc.InstanceTypes {
			if !nc.Requests.Fits(o.Shape.Allocatable) {
				t.Errorf("claim %d (%v): requests %s do not fit %s allocatable %s", i, nc.Pods, nc.Requests, o.Type.Name, o.Shape.Allocatable)
			}
			if len(o.Offerings) == 0 {
				t.Errorf("claim %d: %s has no offerings", i, o.Type.Name)
			}
			labels := o.Type.Labels()
			for _, of := range o.Offerings {
				if !of.Available {
					t.Errorf("claim %d: %s offers unavailable %+v", i, o.Type.Name, of)
				}
				labels[apiv1.LabelZone], labels[apiv1.LabelCapacityType] = of.Zone, of.CapacityType
				for _, r := range nc.Requirements {
					if typeLevelKeys[r.Key] || isOfferingKey(r.Key) {
						v, has := labels[r.Key]
						if !r.Matches(v, has) {
							t.Errorf("claim %d: %s offering %+v breaks requirement %s", i, o.Type.Name, of, reqString(r))
						}
					}
				}
			}
			p := CheapestOffering(o.Offerings).Price
			if p < prev {
				t.Errorf("claim %d: instance types not in price order at %s", i, o.Type.Name)
			}
			prev = p
			maxCap = maxCap.Max(o.Shape.Capacity)
		}
		usage[nc.NodePool] = usage[nc.NodePool].Add(maxCap)
		nodes[nc.NodePool]++
	}
	for _, p := range in.Pods {
		if seen[p.Key()] != 1 {
			t.Errorf("pod %s appears %d times in the plan", p.Key(), seen[p.Key()])
		}
	}
	for _, np := range in.NodePools {
		u := usage[np.Name].Add(np.Usage)
		for r := 0; r < resources.Count; r++ {
			if np.HasLimit[r] && u[r] > np.Limits[r] {
				t.Errorf("NodePool %s: %s usage %d exceeds limit %d", np.Name, resources.Names[r], u[r], np.Limits[r])
			}
		}
		if np.NodesLimit >= 0 && np.NodeCount+nodes[np.Name] > np.NodesLimit {
			t.Errorf("NodePool %s: %d nodes exceed limit %d", np.Name, np.NodeCount+nodes[np.Name], np.NodesLimit)
		}
	}
}

// cheapestUnitPrice is the lowest USD/hour per unit of allocatable resource
// r among the pool's types (available offerings in offs), or 0 if none.
func cheapestUnitPrice(p NodePool, r int, offs func(catalog.Offering) bool) float64 {
	best := 0.0
	for _, o := range p.InstanceTypes {
		if o.Shape.Allocatable[r] <= 0 {
			continue
		}
		for _, of := range o.Offerings {
			if !of.Available || (offs != nil && !offs(of)) {
				continue
			}
			if u := of.Price / float64(o.Shape.Allocatable[r]); best == 0 || u < best {
				best = u
			}
		}
	}
	return best
}
