package capacity

import (
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/headroom"
)

// Headroom is what the leader's checks of the capacity buffers remember
// from one to the next: the tracker of real pods landing in buffer space,
// the buffers whose gauges are set, and when a plan last left virtual pods
// unschedulable (so the provisioner waits for them as for real pods). The
// checks themselves read the solver's snapshot (activities.Headroom). It
// is safe for concurrent use.
type Headroom struct {
	metrics *metrics.Metrics

	mu      sync.Mutex
	tracker headroom.Tracker
	gauges  map[string]bool // buffers whose gauges are set
	// unschedAt and unsched: when a plan in this process last left
	// virtual pods unschedulable, and how many (no trigger for as many
	// within UnschedulableRetry).
	unschedAt time.Time
	unsched   int
}

// NewHeadroom keeps the buffers' gauges in m (nil: none).
func NewHeadroom(m *metrics.Metrics) *Headroom { return &Headroom{metrics: m} }

// Observe records a check and returns, by buffer, the real pods absorbed
// since the last one (also counted in joinery's absorbed metric).
func (h *Headroom) Observe(c headroom.Check) map[string]headroom.Absorption {
	h.mu.Lock()
	absorbed := h.tracker.Observe(c)
	h.mu.Unlock()
	for k, ab := range absorbed {
		ns, name, _ := strings.Cut(k, "/")
		h.metrics.BufferAbsorbed(ns, name, ab.Pods, ab.Burst)
	}
	return absorbed
}

// KeepGauges drops the gauges of the buffers not in live (nil: all) and
// remembers the live ones as set.
func (h *Headroom) KeepGauges(live map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gauges == nil {
		h.gauges = map[string]bool{}
	}
	for k := range h.gauges {
		if !live[k] {
			ns, name, _ := strings.Cut(k, "/")
			h.metrics.DeleteBuffer(ns, name)
			delete(h.gauges, k)
		}
	}
	for k := range live {
		h.gauges[k] = true
	}
}

// Unschedulable records that a plan left n virtual pods unschedulable at now.
func (h *Headroom) Unschedulable(n int, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsched, h.unschedAt = n, now
}

// ForgetUnschedulable forgets that a plan found no room for virtual pods
// (a NodePool or EC2NodeClass changed: there may be room now).
func (h *Headroom) ForgetUnschedulable() { h.Unschedulable(0, time.Time{}) }

// Short is how many of pending virtual pods provisioning should buy
// capacity for at now: none while the last plan, within
// UnschedulableRetry, found no room for as many.
func (h *Headroom) Short(pending int, now time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if pending > 0 && pending <= h.unsched && now.Sub(h.unschedAt) < UnschedulableRetry {
		return 0 // the last plan found no room for these: wait, as for real pods
	}
	return pending
}
