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
	// ErrorCode is the error the endpoint answered the request with ("" for
	// an answer; a CreateFleet's per-launch errors are in its answer).
	ErrorCode string
}

// Clone copies the headers (and parameters).
func (r Request) Clone() Request {
	r.Header = r.Header.Clone()
	r.Params = reqlog.CloneValues(r.Params)
	return r
}

// recordLocked appends r's request to the log when recording is on. It is
// called with s.mu held, so the log's order is the order s.mu was taken in.
func (s *Server) recordLocked(r *http.Request, action string, f form, throttled bool) reqlog.Entry {
	return s.Record(func() Request {
		return Request{
			Time: time.Now(), Action: action, Header: r.Header.Clone(),
			Params: reqlog.CloneValues(url.Values(f)), Throttled: throttled,
		}
	})
}

// answerWriter notes the error code writeError answers a recorded request
// with.
type answerWriter struct {
	http.ResponseWriter
	code string
}

// noteAnswer records the code w was answered with on the request e names.
func (s *Server) noteAnswer(e reqlog.Entry, w *answerWriter) {
	if w.code != "" {
		s.Amend(e, func(r *Request) { r.ErrorCode = w.code })
	}
}
