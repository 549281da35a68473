package headroom

import "sort"

// Check is one look at the buffers: per buffer, the virtual pods wanted
// and where the ones placed on existing capacity (Ready nodes and
// in-flight NodeClaims) sit; per node, the real pods bound to it (UIDs,
// DaemonSet pods aside).
type Check struct {
	Wanted map[string]int      // buffer -> virtual pods
	Placed map[string][]string // buffer -> node of each placed virtual pod
	Pods   map[string][]string // node -> real pod UIDs
}

// Held is how many of a buffer's virtual pods are placed on existing capacity.
func (c Check) Held(buffer string) int { return len(c.Placed[buffer]) }

// Absorption is what a Tracker saw between two checks for one buffer.
type Absorption struct {
	// Pods is the number of real pods that landed in the buffer's space:
	// min(the buffer's placed virtual pods lost since the last check, its
	// wanted count not lowered; the real pods newly bound to the nodes
	// that held them at the last check).
	Pods int
	// Burst is true on the first check of a run of checks that each
	// absorbed pods (one burst however many checks its pods take to bind).
	Burst bool
}

// Tracker counts the real pods that land in buffer space: between two
// checks a buffer lost placed virtual pods (its wanted count did not drop)
// while real pods were bound to the nodes that held them. Not safe for
// concurrent use.
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
	seen := map[string]map[string]bool{}
	for node, uids := range prev.Pods {
		s := map[string]bool{}
		for _, u := range uids {
			s[u] = true
		}
		seen[node] = s
	}
	for _, b := range sortedKeys(c.Wanted) {
		before := min(prev.Held(b), c.Wanted[b])
		lost := before - c.Held(b)
		landed := 0
		if lost > 0 {
			nodes := map[string]bool{}
			for _, n := range prev.Placed[b] {
				nodes[n] = true
			}
			for n := range nodes {
				old, known := seen[n]
				if !known {
					continue
				}
				for _, u := range c.Pods[n] {
					if !old[u] {
						landed++
					}
				}
			}
		}
		if k := min(lost, landed); k > 0 {
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
