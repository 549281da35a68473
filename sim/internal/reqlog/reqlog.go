// Package reqlog is the request log the sim endpoints keep for tests: off
// by default, turned on with SetRecording, read with Snapshot.
package reqlog

import (
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Log records values of type R (one per API request) while recording is
// on. The zero Log is ready, not recording. Safe for concurrent use.
type Log[R any] struct {
	mu  sync.Mutex
	on  bool
	rs  []R
	gen int // bumped by Reset, so an Entry from before it amends nothing
}

// Entry names one recorded value, to amend once the request is answered.
// The zero Entry names none.
type Entry struct{ gen, i int }

// SetRecording turns recording on or off. Turning it on does not clear
// what was recorded before; Reset does.
func (l *Log[R]) SetRecording(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = on
}

// Add appends build() when recording is on; build is not called
// otherwise, so a request costs nothing to log while the log is off.
func (l *Log[R]) Add(build func() R) Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return Entry{}
	}
	l.rs = append(l.rs, build())
	return Entry{gen: l.gen, i: len(l.rs)}
}

// Amend applies f to the value e names, if it is still recorded.
func (l *Log[R]) Amend(e Entry, f func(*R)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.i > 0 && e.gen == l.gen && e.i <= len(l.rs) {
		f(&l.rs[e.i-1])
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
	l.gen++
}

// CloneValues is a deep copy of v (url.Values has no Clone).
func CloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// Cloner is a recorded request that copies itself, so that a reader owns
// what Requests returns.
type Cloner[R any] interface{ Clone() R }

// Recorder is the request log an endpoint's Server embeds: it gives the
// Server the calls tests make (SetRecording, Requests, ResetRequests).
type Recorder[R Cloner[R]] struct{ log Log[R] }

// SetRecording turns the request log on or off (off by default). Turning
// it on does not clear what was recorded before; ResetRequests does.
func (r *Recorder[R]) SetRecording(on bool) { r.log.SetRecording(on) }

// Requests returns the requests recorded so far, in arrival order (copies).
func (r *Recorder[R]) Requests() []R { return r.log.Snapshot(func(x R) R { return x.Clone() }) }

// ResetRequests forgets the recorded requests.
func (r *Recorder[R]) ResetRequests() { r.log.Reset() }

// Record appends build() while recording is on (build is not called
// otherwise).
func (r *Recorder[R]) Record(build func() R) Entry { return r.log.Add(build) }

// Amend applies f to the recorded request e names (its answer, known
// after it was recorded).
func (r *Recorder[R]) Amend(e Entry, f func(*R)) { r.log.Amend(e, f) }

// Call is a request as the JSON-protocol endpoints record it.
type Call struct {
	Time time.Time
	// Operation is the X-Amz-Target operation without the service's
	// prefix; for a request without it, the raw header value.
	Operation string
	// Header is a copy of the HTTP headers: User-Agent, and whatever tag a
	// test's client or proxy puts on its requests to tell callers apart.
	Header http.Header
}

// NewCall records r as operation op.
func NewCall(r *http.Request, op string) Call {
	return Call{Time: time.Now(), Operation: op, Header: r.Header.Clone()}
}

// Clone copies the headers.
func (c Call) Clone() Call {
	c.Header = c.Header.Clone()
	return c
}
