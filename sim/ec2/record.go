package ec2

import (
	"net/http"
	"net/url"
	"time"
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
func (s *Server) SetRecording(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recording = on
}

// Requests returns the requests recorded so far, in arrival order. The
// slice and its headers and parameters are copies.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Params = cloneValues(r.Params)
		out[i] = r
	}
	return out
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// recordLocked appends r's request to the log when recording is on.
func (s *Server) recordLocked(r *http.Request, action string, f form, throttled bool) {
	if !s.recording {
		return
	}
	s.requests = append(s.requests, Request{
		Time: time.Now(), Action: action, Header: r.Header.Clone(),
		Params: cloneValues(url.Values(f)), Throttled: throttled,
	})
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
