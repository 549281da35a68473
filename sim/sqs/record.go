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
func (s *Server) SetRecording(on bool) { s.log.SetRecording(on) }

// Requests returns the requests recorded so far, in arrival order (copies).
func (s *Server) Requests() []Request { return s.log.Snapshot(Request.clone) }

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() { s.log.Reset() }

func (r Request) clone() Request {
	r.Header = r.Header.Clone()
	return r
}

func (s *Server) record(r *http.Request, op string) {
	s.log.Add(func() Request { return Request{Time: time.Now(), Operation: op, Header: r.Header.Clone()} })
}
