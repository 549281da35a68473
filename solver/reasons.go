package solver

import (
	"fmt"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// reason explains, in words a platform engineer can act on, why no
// existing node, open claim or NodePool took the pod.
func (s *pass) reason(pi *podInfo) string {
	if pi.pod.Refused != "" {
		return pi.pod.Refused
	}
	if u := pi.pod.UnknownResources; len(u) > 0 {
		word := "resource"
		if len(u) > 1 {
			word = "resources"
		}
		return fmt.Sprintf("requests unknown %s %s: no instance type offers it", word, strings.Join(u, ", "))
	}
	if len(s.p.pools) == 0 {
		return "no existing node fits and there is no NodePool to launch a node from"
	}
	if ex := exceeding(pi.req, s.p.maxUsable); len(ex) > 0 {
		return fmt.Sprintf("no instance type in any NodePool has enough resources: requests %s exceed the largest allocatable (%s)",
			formatList(pi.req, ex), formatList(s.p.maxUsable, ex))
	}
	parts := make([]string, 0, len(s.p.pools))
	for _, pl := range s.p.pools {
		parts = append(parts, s.poolReason(pl, pi))
	}
	return strings.Join(parts, "; ")
}

func (s *pass) poolReason(pl *poolInfo, pi *podInfo) string {
	name := pl.np.Name
	sp := pi.sig.forPool(pl)
	if sp.taint != nil {
		return fmt.Sprintf("incompatible with NodePool %s: untolerated taint %s", name, taintString(sp.taint))
	}
	if pl.fail != "" {
		return fmt.Sprintf("NodePool %s can launch nothing: its requirement %s is never met", name, pl.fail)
	}
	hasBase := false
	for _, m := range pl.base {
		if m != 0 {
			hasBase = true
			break
		}
	}
	if !hasBase {
		return fmt.Sprintf("NodePool %s has no instance type with an available offering that meets its requirements", name)
	}
	compatible := false
	for _, c := range sp.terms {
		compatible = compatible || c.any
	}
	if !compatible {
		return fmt.Sprintf("incompatible with NodePool %s: %s", name, termsReason(pl, sp))
	}
	fitting, maxU := fittingTypes(pl, sp, pi)
	if len(fitting) == 0 {
		if ex := exceeding(pi.req, maxU); len(ex) > 0 {
			return fmt.Sprintf("NodePool %s: no compatible instance type has enough resources: requests %s exceed the largest allocatable (%s)",
				name, formatList(pi.req, ex), formatList(maxU, ex))
		}
		return fmt.Sprintf("NodePool %s: no single compatible instance type fits requests %s together", name, formatList(pi.req, nonZero(pi.req)))
	}
	if len(pi.ports) > 0 && pl.dsPorts != nil {
		free, held := portFree(pl, pi, fitting)
		if len(free) == 0 {
			return fmt.Sprintf("NodePool %s: every instance type that fits runs a DaemonSet holding host port %s", name, portString(held))
		}
		fitting = free
	}
	if !s.nodesOK(pl) {
		return fmt.Sprintf("NodePool %s limits reached (nodes: %d)", name, pl.np.NodesLimit)
	}
	if names := s.limitsExceeded(pl, sp, fitting); len(names) > 0 {
		return fmt.Sprintf("NodePool %s limits reached (%s)", name, strings.Join(names, ", "))
	}
	if len(pl.minValues) > 0 {
		return fmt.Sprintf("NodePool %s: the types that fit cannot meet the minValues of its requirements", name)
	}
	last := pi.levels[len(pi.levels)-1]
	if len(last.cons) > 0 || len(pi.topo.antiMatch) > 0 {
		var cs []string
		for _, c := range last.cons {
			cs = append(cs, c.String())
		}
		if len(pi.topo.antiMatch) > 0 {
			cs = append(cs, "anti-affinity of other pods")
		}
		return fmt.Sprintf("NodePool %s: topology constraints cannot be met: %s", name, strings.Join(cs, ", "))
	}
	if len(pi.ports) > 0 {
		return fmt.Sprintf("NodePool %s: host ports %s conflict", name, portString(pi.ports[0]))
	}
	return fmt.Sprintf("NodePool %s: no instance type can take the pod", name)
}

// fittingTypes are the pool's instance types compatible with the pod
// whose allocatable fits its requests, and the largest allocatable of the
// compatible ones.
func fittingTypes(pl *poolInfo, sp *poolSignature, pi *podInfo) (fitting []int, maxU resources.List) {
	for t := range pl.types {
		ok := false
		for _, c := range sp.terms {
			ok = ok || c.masks[t] != 0
		}
		if !ok {
			continue
		}
		maxU = maxU.Max(pl.usable[t])
		if pi.req.Fits(pl.usable[t]) {
			fitting = append(fitting, t)
		}
	}
	return fitting, maxU
}

// portFree are the fitting types whose DaemonSets leave the pod's host
// ports free; held is a port a DaemonSet holds on one that does not.
func portFree(pl *poolInfo, pi *podInfo, fitting []int) (free []int, held HostPort) {
	for _, t := range fitting {
		if hp, bad := portsConflict(pi.ports, pl.dsPorts[t]); bad {
			held = hp
			continue
		}
		free = append(free, t)
	}
	return free, held
}

// limitsExceeded names the limits (resources, then the USD/hour limit)
// that rule out the fitting types: those every fitting type would exceed,
// else any.
func (s *pass) limitsExceeded(pl *poolInfo, sp *poolSignature, fitting []int) []string {
	var over [resources.Count + 1]int // the last entry is the USD/hour limit
	for _, t := range fitting {
		c := pl.types[t].opt.Shape.Capacity
		for r := 0; r < resources.Count; r++ {
			if pl.np.HasLimit[r] && s.usage[pl.idx][r]+c[r] > pl.np.Limits[r] {
				over[r]++
			}
		}
		if !costOK(pl, s.cost[pl.idx], podUSD(pl, sp, t)) {
			over[resources.Count]++
		}
	}
	name := func(r int) string {
		if r == resources.Count {
			return fmt.Sprintf("%s: %s USD/hour", apiv1.AnnotationLimitUSDPerHour, strconv.FormatFloat(pl.np.CostLimit, 'f', -1, 64))
		}
		return string(resources.Names[r])
	}
	var every, some []string
	for r, n := range over {
		if n == len(fitting) {
			every = append(every, name(r))
		}
		if n > 0 {
			some = append(some, name(r))
		}
	}
	if len(every) > 0 {
		return every
	}
	return some
}

// termsReason names the requirement(s) of the pod that no type or offering
// of the pool meets.
func termsReason(pl *poolInfo, sp *poolSignature) string {
	if len(sp.terms) == 1 {
		return termReason(pl, sp.terms[0])
	}
	parts := make([]string, len(sp.terms))
	for i, c := range sp.terms {
		parts[i] = fmt.Sprintf("term %d: %s", i+1, termReason(pl, c))
	}
	return fmt.Sprintf("none of the %d required node-affinity terms can be met (%s)", len(sp.terms), strings.Join(parts, "; "))
}

func termReason(pl *poolInfo, c *compiledTerm) string {
	if c.fail != "" {
		if strings.HasPrefix(c.fail, "an empty") {
			return c.fail
		}
		return "requirement " + c.fail + " is never met on its nodes"
	}
	for _, r := range c.reqs {
		if !pl.compile([]req{r}).any {
			return "no instance type or offering meets requirement " + reqString(r)
		}
	}
	strs := make([]string, len(c.reqs))
	for i, r := range c.reqs {
		strs[i] = reqString(r)
	}
	return "no instance type or offering meets requirements " + strings.Join(strs, ", ") + " together"
}

// reqString formats a requirement, e.g. "kubernetes.io/arch In [arm64]".
func reqString(r req) string {
	switch r.Operator {
	case apiv1.OpExists, apiv1.OpDoesNotExist:
		return r.Key + " " + r.Operator
	}
	return r.Key + " " + r.Operator + " [" + strings.Join(r.Values, " ") + "]"
}

func exceeding(l, c resources.List) []int {
	var out []int
	for i := range l {
		if l[i] > c[i] {
			out = append(out, i)
		}
	}
	return out
}

func nonZero(l resources.List) []int {
	var out []int
	for i := range l {
		if l[i] != 0 && i != resources.Pods {
			out = append(out, i)
		}
	}
	return out
}

// formatList formats the chosen entries: cpu as cores or millicores
// ("2", "1500m"), memory and storage in the largest exact binary unit
// ("16Gi"), counts as integers.
func formatList(l resources.List, idx []int) string {
	parts := make([]string, 0, len(idx))
	for _, i := range idx {
		parts = append(parts, string(resources.Names[i])+"="+formatQuantity(i, l[i]))
	}
	return strings.Join(parts, " ")
}

func formatQuantity(i int, v int64) string {
	switch i {
	case resources.CPU:
		if v%1000 == 0 {
			return strconv.FormatInt(v/1000, 10)
		}
		return strconv.FormatInt(v, 10) + "m"
	case resources.Memory, resources.EphemeralStorage:
		for _, u := range []struct {
			s string
			n int64
		}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
			if v != 0 && v%u.n == 0 {
				return strconv.FormatInt(v/u.n, 10) + u.s
			}
		}
	}
	return strconv.FormatInt(v, 10)
}
