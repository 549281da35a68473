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

// SetRecording turns the request log on or off (off by default: a long run
// would hold every CreateFleet's parameters). Turning it on does not clear
// what was recorded before; ResetRequests does.
func (s *Server) SetRecording(on bool) { s.log.SetRecording(on) }

// Requests returns the requests recorded so far, in arrival order. The
// slice and its headers and parameters are copies.
func (s *Server) Requests() []Request { return s.log.Snapshot(Request.clone) }

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() { s.log.Reset() }

func (r Request) clone() Request {
	r.Header = r.Header.Clone()
	r.Params = reqlog.CloneValues(r.Params)
	return r
}

// recordLocked appends r's request to the log when recording is on. It is
// called with s.mu held, so the log's order is the order s.mu was taken in.
func (s *Server) recordLocked(r *http.Request, action string, f form, throttled bool) {
	s.log.Add(func() Request {
		return Request{
			Time: time.Now(), Action: action, Header: r.Header.Clone(),
			Params: reqlog.CloneValues(url.Values(f)), Throttled: throttled,
		}
	})
}
