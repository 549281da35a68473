package disruption

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// RequirementsDrift says whether a node's labels are still admitted by its
// NodePool's requirements, as Karpenter's requirements drift does
// (nodeClaimLabelRequirements.Compatible(nodePoolRequirements) with no
// undefined key allowed). The pool's requirements are merged by key (their
// intersection, Gt/Lt/Gte/Lte as integer bounds; deprecated aliases such as
// beta.kubernetes.io/arch normalized), then for every key:
//   - a node with the label is admitted only if the merged requirement
//     holds its value;
//   - a node without it is admitted only if the merged requirement is
//     NotIn or DoesNotExist (In, Exists and the integer bounds need the label).
//
// The labels are the NodeClaim's (set at launch from the instance type and
// offering), plus the well-known labels (topology, arch, os, instance type,
// capacity type, karpenter.k8s.aws/*) that only its Node carries, e.g.
// topology.kubernetes.io/region; node may be nil. It returns the first
// requirement (by key) that no longer admits the node, for people ("": all
// admit it).
func RequirementsDrift(claim *apiv1.NodeClaim, node *corev1.Node, pool *apiv1.NodePool) string {
	labels := map[string]string{}
	if node != nil {
		for k, v := range node.Labels {
			if k = normalizedKey(k); wellKnown(k) {
				labels[k] = v
			}
		}
	}
	for k, v := range claim.Labels {
		labels[normalizedKey(k)] = v
	}
	merged := map[string]requirement{}
	written := map[string][]string{}
	for _, r := range pool.Spec.Template.Spec.Requirements {
		key := normalizedKey(r.Key)
		req := newRequirement(r)
		if cur, ok := merged[key]; ok {
			req = cur.intersection(req)
		}
		merged[key] = req
		written[key] = append(written[key], fmt.Sprintf("%s %s %v", r.Key, r.Operator, r.Values))
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		req := merged[k]
		v, has := labels[k]
		switch {
		case has && !req.has(v):
			return fmt.Sprintf("label %s=%s is not admitted by NodePool %s's requirement %s", k, v, pool.Name, strings.Join(written[k], ", "))
		case !has && req.operator() != apiv1.OpNotIn && req.operator() != apiv1.OpDoesNotExist:
			return fmt.Sprintf("label %s is not on the node and NodePool %s requires %s", k, pool.Name, strings.Join(written[k], ", "))
		}
	}
	return ""
}

func normalizedKey(k string) string {
	if n, ok := apiv1.NormalizedLabels[k]; ok {
		return n
	}
	return k
}

// wellKnown: labels the instance or its offering sets, which a Node may
// carry when its NodeClaim does not.
func wellKnown(k string) bool {
	switch k {
	case apiv1.LabelZone, apiv1.LabelRegion, apiv1.LabelArch, apiv1.LabelOS, apiv1.LabelInstanceType, apiv1.LabelCapacityType:
		return true
	}
	return strings.HasPrefix(k, "karpenter.k8s.aws/")
}

// requirement is one key's set of admitted values (Karpenter's
// scheduling.Requirement): values, or all but values (complement), within
// the inclusive integer bounds gte/lte when set.
type requirement struct {
	complement bool
	values     map[string]bool
	gte, lte   *int
}

func newRequirement(r apiv1.NodeSelectorRequirementWithMinValues) requirement {
	out := requirement{values: map[string]bool{}}
	switch r.Operator {
	case apiv1.OpIn:
		for _, v := range r.Values {
			out.values[v] = true
		}
	case apiv1.OpNotIn:
		out.complement = true
		for _, v := range r.Values {
			out.values[v] = true
		}
	case apiv1.OpExists:
		out.complement = true
	case apiv1.OpDoesNotExist:
	case apiv1.OpGt, apiv1.OpLt, apiv1.OpGte, apiv1.OpLte:
		n := 0
		if len(r.Values) == 1 {
			n, _ = strconv.Atoi(r.Values[0]) // Validate refuses a non-integer
		}
		out.complement = true
		switch r.Operator {
		case apiv1.OpGt:
			if n == math.MaxInt {
				return requirement{values: map[string]bool{}} // Gt MaxInt admits nothing: DoesNotExist
			}
			n++ // Gt n is Gte n+1
			out.gte = &n
		case apiv1.OpGte:
			out.gte = &n
		case apiv1.OpLt:
			n-- // Lt n is Lte n-1
			out.lte = &n
		default:
			out.lte = &n
		}
	}
	return out
}

// intersection is what both admit (Karpenter's Requirement.Intersection).
func (r requirement) intersection(o requirement) requirement {
	complement := r.complement && o.complement
	gte, lte := maxPtr(r.gte, o.gte), minPtr(r.lte, o.lte)
	if gte != nil && lte != nil && *gte > *lte {
		return requirement{values: map[string]bool{}}
	}
	values := map[string]bool{}
	switch {
	case r.complement && o.complement:
		for v := range r.values {
			values[v] = true
		}
		for v := range o.values {
			values[v] = true
		}
	case r.complement:
		for v := range o.values {
			if !r.values[v] {
				values[v] = true
			}
		}
	case o.complement:
		for v := range r.values {
			if !o.values[v] {
				values[v] = true
			}
		}
	default:
		for v := range r.values {
			if o.values[v] {
				values[v] = true
			}
		}
	}
	for v := range values {
		if !withinBounds(v, gte, lte) {
			delete(values, v)
		}
	}
	if !complement {
		gte, lte = nil, nil
	}
	return requirement{complement: complement, values: values, gte: gte, lte: lte}
}

// has reports whether the value is admitted.
func (r requirement) has(v string) bool {
	if r.complement {
		return !r.values[v] && withinBounds(v, r.gte, r.lte)
	}
	return r.values[v] && withinBounds(v, r.gte, r.lte)
}

// operator is the requirement read back as one operator: NotIn (all but
// some values), Exists (all, maybe bounded: Gt and Lt), In, DoesNotExist.
func (r requirement) operator() string {
	switch {
	case r.complement && len(r.values) > 0:
		return apiv1.OpNotIn
	case r.complement:
		return apiv1.OpExists
	case len(r.values) > 0:
		return apiv1.OpIn
	}
	return apiv1.OpDoesNotExist
}

func withinBounds(v string, gte, lte *int) bool {
	if gte == nil && lte == nil {
		return true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return false
	}
	return (gte == nil || n >= *gte) && (lte == nil || n <= *lte)
}

func maxPtr(a, b *int) *int {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

func minPtr(a, b *int) *int {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}
