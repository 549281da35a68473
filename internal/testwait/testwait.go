// Package testwait holds the one polling helper unit tests share: informer
// caches and simulated endpoints answer a write a little later.
package testwait

import (
	"testing"
	"time"
)

// Bound is how long Eventually waits by default: generous, since a busy CI
// machine delays informers, never a figure a test measures.
const Bound = 10 * time.Second

// Eventually polls cond every 5 ms until it holds, failing the test with what
// after within (0: Bound).
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if within == 0 {
		within = Bound
	}
	for deadline := time.Now().Add(within); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}
