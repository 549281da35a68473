package ec2

import (
	"net/http"
	"net/url"
	"time"

	"github.com/joinery/joinery/sim/internal/reqlog"
)

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called: tests use it to see which operations a
// client made (e.g. against deploy/iam-policy.json) and with what.
type Request struct {
	Time time.Time
	// Action is the Query-protocol Action parameter ("CreateFleet"); empty
	// if the request named none.
	Action string
	// Header is a copy of the HTTP headers: User-Agent, and whatever tag a
	// test's client or proxy puts on its requests to tell callers apart.
	Header http.Header
	// Params are the request's Query parameters (Action and Version
	// included), e.g. "InstanceId.1" of a TerminateInstances.
	Params url.Values
	// Throttled is set when the request was refused with RequestLimitExceeded.
	Throttled bool
}

// Clone copies the headers (and parameters).
func (r Request) Clone() Request {
	r.Header = r.Header.Clone()
	r.Params = reqlog.CloneValues(r.Params)
	return r
}

// recordLocked appends r's request to the log when recording is on. It is
// called with s.mu held, so the log's order is the order s.mu was taken in.
func (s *Server) recordLocked(r *http.Request, action string, f form, throttled bool) {
	s.Record(func() Request {
		return Request{
			Time: time.Now(), Action: action, Header: r.Header.Clone(),
			Params: reqlog.CloneValues(url.Values(f)), Throttled: throttled,
		}
	})
}
