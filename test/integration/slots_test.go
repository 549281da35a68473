//go:build integration

package integration

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Two local worlds can run at once: each test that starts one takes a
// slot, and every fixed loopback port of its world (Temporal, Web UI,
// control plane, the controller's metrics) is shifted by slotStride times
// the slot number. The slots are JOINERY_IT_WORLDS (default 2, at most
// maxWorlds); the tests that start a world call parallel(t), so
// `go test -parallel N` runs at most min(N, slots) worlds together.
// JOINERY_IT_WORLDS=1 runs the package one world at a time, as before.
// JOINERY_IT_FIRST_SLOT (default 0) moves the slots up, so that a second
// run of the package on the same machine (another worktree) can use
// slots the first does not: slots first..first+worlds-1, at most slot 7.

const (
	slotStride = 100 // every base port + 3*slotStride stays clear of the next base port
	maxWorlds  = 8
)

var (
	slotPool = func() chan int {
		n := 2
		if v, err := strconv.Atoi(os.Getenv("JOINERY_IT_WORLDS")); err == nil && v >= 1 {
			n = min(v, maxWorlds)
		}
		first := 0
		if v, err := strconv.Atoi(os.Getenv("JOINERY_IT_FIRST_SLOT")); err == nil && v >= 0 && v < maxWorlds {
			first = v
		}
		n = min(n, maxWorlds-first)
		c := make(chan int, n)
		for i := first; i < first+n; i++ {
			c <- i
		}
		return c
	}()
	slotMu    sync.Mutex
	slotsHeld = map[string]*heldSlot{} // top-level test name -> its slot
)

type heldSlot struct{ slot, refs int }

// parallel marks a test that starts a local world as parallel with the
// other such tests; slotOf then gives it one of the JOINERY_IT_WORLDS slots.
func parallel(t *testing.T) {
	t.Helper()
	if cap(slotPool) > 1 {
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
		s := <-slotPool
		slotMu.Lock()
		h = &heldSlot{slot: s}
		slotsHeld[top] = h
	}
	h.refs++
	slotMu.Unlock()
	t.Cleanup(func() {
		slotMu.Lock()
		defer slotMu.Unlock()
		if h.refs--; h.refs == 0 {
			delete(slotsHeld, top)
			slotPool <- h.slot
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
