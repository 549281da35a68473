package headroom

import "sort"

// Check is one look at the buffers: per buffer, the virtual pods wanted
// and where the ones placed on existing capacity (Ready nodes and
// in-flight NodeClaims) sit; per node, the real pods bound to it (UIDs,
// DaemonSet pods aside).
type Check struct {
	Wanted map[string]int      // buffer -> virtual pods
	Placed map[string][]string // buffer -> node of each placed virtual pod
	Pods   map[string][]string // node -> real pod UIDs (every node, none: empty)
}

// Held is how many of a buffer's virtual pods are placed on existing capacity.
func (c Check) Held(buffer string) int { return len(c.Placed[buffer]) }

// Absorption is what a Tracker saw between two checks for one buffer.
type Absorption struct {
	// Pods is the number of real pods that landed in the buffer's space:
	// over the nodes that held its virtual pods at the last check, the
	// smaller of the virtual pods the node lost and the real pods newly
	// bound to it, summed, less any lowering of the buffer's wanted count.
	Pods int
	// Burst is true on the first check of a run of checks that each
	// absorbed pods (one burst however many checks its pods take to bind).
	Burst bool
}

// Tracker counts the real pods that land in buffer space (see
// Absorption). Not safe for concurrent use.
type Tracker struct {
	prev     *Check
	inBurst  map[string]bool
	absorbed map[string]int // totals since start, by buffer
}

// Observe records a check and returns, by buffer, what was absorbed since
// the previous one (buffers with nothing absorbed are left out).
func (t *Tracker) Observe(c Check) map[string]Absorption {
	if t.inBurst == nil {
		t.inBurst, t.absorbed = map[string]bool{}, map[string]int{}
	}
	out := map[string]Absorption{}
	prev := t.prev
	t.prev = &c
	if prev == nil {
		return out
	}
	newPods := map[string]int{} // node -> real pods bound since the last check
	for node, uids := range c.Pods {
		old, known := prev.Pods[node]
		if !known {
			continue // a new node: its pods did not land in buffer space
		}
		seen := make(map[string]bool, len(old))
		for _, u := range old {
			seen[u] = true
		}
		for _, u := range uids {
			if !seen[u] {
				newPods[node]++
			}
		}
	}
	for _, b := range sortedKeys(c.Wanted) {
		before, now := countByNode(prev.Placed[b]), countByNode(c.Placed[b])
		k := 0
		for node, n := range before {
			if lost := n - now[node]; lost > 0 {
				k += min(lost, newPods[node])
			}
		}
		if w, ok := prev.Wanted[b]; ok && c.Wanted[b] < w {
			k -= w - c.Wanted[b]
		}
		if k > 0 {
			out[b] = Absorption{Pods: k, Burst: !t.inBurst[b]}
			t.inBurst[b] = true
			t.absorbed[b] += k
			continue
		}
		t.inBurst[b] = false
	}
	for b := range t.inBurst {
		if _, ok := c.Wanted[b]; !ok {
			delete(t.inBurst, b)
		}
	}
	return out
}

func countByNode(nodes []string) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[n]++
	}
	return out
}

// Absorbed is the total of real pods a buffer absorbed since start.
func (t *Tracker) Absorbed(buffer string) int { return t.absorbed[buffer] }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
