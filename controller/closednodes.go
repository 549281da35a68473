package controller

import (
	"time"

	"github.com/joinery/joinery/policy/lifecycle"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/labels"
)

// closedNode is a Ready node still closed to pending pods: when it was
// first seen so, and whether it was reported.
type closedNode struct {
	since time.Time
	told  bool
}

// closedTooLong: a Ready node kept closed this long is reported, once.
const closedTooLong = 10 * time.Second

// reportClosed warns of each Ready node kept closed for closedTooLong,
// with what it waits for: hints of this pass not answered (left), a
// nominee that cannot be pointed yet or hints left to the next pass
// (later), pointers the scheduler cleared that are not written again.
func (h *schedulerHints) reportClosed(left map[string]int, later map[string]bool, now time.Time) {
	nodes, err := h.cl.Nodes.List(labels.Everything())
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	still := map[string]bool{}
	for _, n := range nodes {
		if _, justOpened := h.opened[n.Name]; justOpened || !lifecycle.Opening(n) || !lifecycle.Ready(n) {
			continue // the cache may not show this pass's opening yet
		}
		still[n.Name] = true
		c, seen := h.closed[n.Name]
		if !seen {
			h.closed[n.Name] = closedNode{since: now}
			continue
		}
		if c.told || now.Sub(c.since) < closedTooLong {
			continue
		}
		h.closed[n.Name] = closedNode{since: c.since, told: true}
		h.log.Warn("node kept closed to pending pods", zap.String("node", n.Name), zap.Duration("closedFor", now.Sub(c.since)),
			zap.Int("hintsUnanswered", left[n.Name]), zap.Bool("waitsForNextPass", later[n.Name]), zap.Int("lostPointers", h.lostOn(n.Name)),
			zap.Time("readySince", lifecycle.ReadySince(n)))
	}
	for name := range h.closed {
		if !still[name] {
			delete(h.closed, name)
		}
	}
}
