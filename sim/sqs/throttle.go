package sqs

import (
	"net/http"

	"github.com/joinery/joinery/sim/internal/throttle"
)

// perAction is each action's bucket. Standard queues take a "nearly
// unlimited" number of calls a second per action and AWS publishes no
// number; 3,000 a second (what AWS gives FIFO queues with batching) is
// far above anything Joinery does and only catches a runaway caller.
var perAction = throttle.Limit{Burst: 3000, Refill: 3000}

// throttled takes op's token and, when its bucket is empty, answers SQS's
// RequestThrottled (HTTP 403, as the SQS model says) and reports true.
func (s *Server) throttled(w http.ResponseWriter, op string) bool {
	if s.buckets.Take(op, perAction, 1) {
		return false
	}
	writeError(w, &apiError{http.StatusForbidden, "RequestThrottled", "RequestThrottled",
		"The request was denied due to request throttling."})
	return true
}
