//go:build integration

package integration

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Several local worlds can run at once: each test that starts one takes
// a slot, and every fixed loopback port of its world (Temporal, Web UI,
// control plane, the controller's metrics) is shifted by slotStride times
// the slot number. The slots are JOINERY_IT_WORLDS (default 2, at most
// maxWorlds; hack/test.sh runs 3); the tests that start a world call
// parallel(t), so `go test -parallel N` runs at most min(N, slots) worlds
// together, and with N above the number of tests every test waits in
// slotOf, where the longest go first. JOINERY_IT_WORLDS=1 runs the package
// one world at a time. JOINERY_IT_FIRST_SLOT (default 0) moves the slots
// up, so that a second run of the package on the same machine (another
// worktree) can use slots the first does not: slots first..first+worlds-1,
// at most slot 7.

const (
	slotStride = 100 // every base port + 3*slotStride stays clear of the next base port
	maxWorlds  = 8
)

var (
	slotPool = func() *slotQueue {
		n := 2
		if v, err := strconv.Atoi(os.Getenv("JOINERY_IT_WORLDS")); err == nil && v >= 1 {
			n = min(v, maxWorlds)
		}
		first := 0
		if v, err := strconv.Atoi(os.Getenv("JOINERY_IT_FIRST_SLOT")); err == nil && v >= 0 && v < maxWorlds {
			first = v
		}
		n = min(n, maxWorlds-first)
		q := &slotQueue{size: n}
		for i := first; i < first+n; i++ {
			q.free = append(q.free, i)
		}
		return q
	}()
	slotMu    sync.Mutex
	slotsHeld = map[string]*heldSlot{} // top-level test name -> its slot
)

// longFirst are the tests that took longest in .ci/run (seconds, three
// worlds at a time): they get a slot before the others, so that the run
// does not end with one long test alone. Order only, never a bound.
var longFirst = map[string]int{
	"TestDrainAndReplaceSurvivesWorkerKillsAndKeepsThePDB":       140,
	"TestExpirationDeletesTheNodeClaimAndDrainsByTheGracePeriod": 125,
	"TestDeletionRunsTheNodesTermination":                        110,
	"TestNoSecondWaveWhileNodesBoot":                             108,
	"TestWhatIfNarrowedFamilies":                                 107,
	"TestConsolidateAfterCountsFromTheLastPodEvent":              100,
	"TestConsolidationMovesEachPodOnce":                          95,
	"TestRepairResumesAfterTheWorkerIsKilled":                    88,
	"TestLeastPrivilegeRBACAndIAM":                               86,
	"TestSharedStateAcrossWorkers":                               85,
	"TestGangAllOrNothing":                                       79,
	"TestSliceOnPostgres":                                        76,
	"TestCapacityBufferAbsorbsABurst":                            69,
	"TestGarbageCollection":                                      66,
	"TestNodePoolHeadroomKeepsSpareRoom":                         65,
}

// gatherFor is how long the first slot waits for the tests released
// together to ask, so that the longest of them start first.
const gatherFor = 500 * time.Millisecond

// slotQueue gives free slots to waiting tests, longest first (longFirst),
// then in the order they asked.
type slotQueue struct {
	size     int
	mu       sync.Mutex
	free     []int
	waiting  []*slotWaiter
	gathered bool
	timer    *time.Timer
}

type slotWaiter struct {
	weight int
	got    chan int
}

func (q *slotQueue) take(top string) int {
	w := &slotWaiter{weight: longFirst[top], got: make(chan int, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	if q.timer == nil {
		q.timer = time.AfterFunc(gatherFor, func() {
			q.mu.Lock()
			q.gathered = true
			q.mu.Unlock()
			q.dispatch()
		})
	}
	q.mu.Unlock()
	q.dispatch()
	return <-w.got
}

func (q *slotQueue) give(slot int) {
	q.mu.Lock()
	q.free = append(q.free, slot)
	q.mu.Unlock()
	q.dispatch()
}

func (q *slotQueue) dispatch() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.gathered && len(q.free) > 0 && len(q.waiting) > 0 {
		best := 0
		for i, w := range q.waiting {
			if w.weight > q.waiting[best].weight {
				best = i
			}
		}
		w := q.waiting[best]
		q.waiting = slices.Delete(q.waiting, best, best+1)
		w.got <- q.free[0]
		q.free = q.free[1:]
	}
}

type heldSlot struct {
	slot, refs int
	since      time.Time
}

// slots is how many worlds run at once.
func (q *slotQueue) slots() int { return q.size }

// parallel marks a test that starts a local world as parallel with the
// other such tests; slotOf then gives it one of the JOINERY_IT_WORLDS slots.
func parallel(t *testing.T) {
	t.Helper()
	if slotPool.slots() > 1 {
		t.Parallel()
	}
}

// slotOf takes a slot for t's top-level test (shared by its subtests,
// which run one after another) until t ends, waiting for one if every
// slot is taken.
func slotOf(t *testing.T) int {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	slotMu.Lock()
	h := slotsHeld[top]
	if h == nil {
		slotMu.Unlock()
		s := slotPool.take(top)
		slotMu.Lock()
		h = &heldSlot{slot: s, since: time.Now()}
		slotsHeld[top] = h
	}
	h.refs++
	slotMu.Unlock()
	t.Cleanup(func() {
		slotMu.Lock()
		defer slotMu.Unlock()
		if h.refs--; h.refs == 0 {
			delete(slotsHeld, top)
			slotPool.give(h.slot)
			// hack/testreport ranks the tests by this line, not by their
			// elapsed time, which counts the wait for a slot.
			t.Logf("held world slot %d for %.1fs", h.slot, time.Since(h.since).Seconds())
		}
	})
	return h.slot
}

// port shifts one of the fixed base ports to slot s.
func port(s, base int) int { return base + s*slotStride }

// addr shifts the port of a fixed host:port (a metrics address) to e's slot.
func (e *env) addr(a string) string { return shiftAddr(e.slot, a) }

func shiftAddr(s int, a string) string {
	host, p, err := net.SplitHostPort(a)
	if err != nil || a == "" {
		return a
	}
	n, err := strconv.Atoi(p)
	if err != nil || n == 0 {
		return a
	}
	return net.JoinHostPort(host, fmt.Sprint(port(s, n)))
}

// long skips a test of the long form unless JOINERY_LONG=1
// (hack/test.sh --long); coveredBy names the short tests that cover its
// behaviour.
func long(t *testing.T, coveredBy string) {
	t.Helper()
	if os.Getenv("JOINERY_LONG") != "1" {
		t.Skipf("long form only (JOINERY_LONG=1, hack/test.sh --long); the short form covers it with %s", coveredBy)
	}
}
