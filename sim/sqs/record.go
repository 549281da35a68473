package sqs

import (
	"net/http"
	"time"
)

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called: tests use it to see which operations a
// client made (e.g. against deploy/iam-policy.json). Calls made in process
// (Server.Send, CreateQueue, Counts) are not requests and are not recorded.
type Request struct {
	Time time.Time
	// Operation is the X-Amz-Target operation ("ReceiveMessage"); for a
	// request without the AmazonSQS. prefix, the raw header value.
	Operation string
	// Header is a copy of the HTTP headers: User-Agent, and whatever tag a
	// test's client or proxy puts on its requests to tell callers apart.
	Header http.Header
}

// SetRecording turns the request log on or off (off by default). Turning
// it on does not clear what was recorded before; ResetRequests does.
func (s *Server) SetRecording(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recording = on
}

// Requests returns the requests recorded so far, in arrival order (copies).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
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

func (s *Server) record(r *http.Request, op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording {
		return
	}
	s.requests = append(s.requests, Request{Time: time.Now(), Operation: op, Header: r.Header.Clone()})
}
