// Package testclock drives a fake clock for unit tests whose code waits
// on it (a read-after-write window, a back-off) while the test waits for
// that code.
package testclock

import (
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Drive steps clk a second whenever something waits on it, looking again
// after idle when nothing does, until the returned stop is called.
func Drive(clk *clocktesting.FakeClock, idle time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if clk.HasWaiters() {
				clk.Step(time.Second)
			} else {
				time.Sleep(idle)
			}
		}
	}()
	return func() { close(done) }
}
