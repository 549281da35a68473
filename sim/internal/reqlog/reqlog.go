// Package reqlog is the request log the sim endpoints keep for tests: off
// by default, turned on with SetRecording, read with Snapshot.
package reqlog

import (
	"net/url"
	"sync"
)

// Log records values of type R (one per API request) while recording is
// on. The zero Log is ready, not recording. Safe for concurrent use.
type Log[R any] struct {
	mu sync.Mutex
	on bool
	rs []R
}

// SetRecording turns recording on or off. Turning it on does not clear
// what was recorded before; Reset does.
func (l *Log[R]) SetRecording(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = on
}

// Add appends build() when recording is on; build is not called
// otherwise, so a request costs nothing to log while the log is off.
func (l *Log[R]) Add(build func() R) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.rs = append(l.rs, build())
	}
}

// Snapshot returns the values recorded so far, in the order added, each
// passed through clone (nil: copied as is) so the caller owns what it gets.
func (l *Log[R]) Snapshot(clone func(R) R) []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]R, len(l.rs))
	for i, r := range l.rs {
		if clone != nil {
			r = clone(r)
		}
		out[i] = r
	}
	return out
}

// Reset forgets the recorded values.
func (l *Log[R]) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rs = nil
}

// CloneValues is a deep copy of v (url.Values has no Clone).
func CloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
