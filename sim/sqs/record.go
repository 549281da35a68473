package sqs

import (
	"net/http"

	"github.com/joinery/joinery/sim/internal/reqlog"
)

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called (Operation "ReceiveMessage", without the
// AmazonSQS. prefix): tests use it to see which operations a client made
// (e.g. against deploy/iam-policy.json). Calls made in process
// (Server.Send, CreateQueue, Counts) are not requests and are not recorded.
type Request = reqlog.Call

func (s *Server) record(r *http.Request, op string) {
	s.Record(func() Request { return reqlog.NewCall(r, op) })
}
