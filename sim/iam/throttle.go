package iam

import (
	"net/http"

	"github.com/joinery/joinery/sim/internal/throttle"
)

// accountCalls is the IAM bucket: IAM throttles with token buckets but
// publishes no rates, so this one (20 calls, 10 a second, the account's
// calls together: IAM is a global service) is an assumption, kept low.
var accountCalls = throttle.Limit{Burst: 20, Refill: 10}

// throttled takes the call's token and, when the bucket is empty, answers
// IAM's Throttling error (HTTP 400, type Sender) and reports true.
func (s *Server) throttled(w http.ResponseWriter) bool {
	if s.buckets.Take("iam", accountCalls, 1) {
		return false
	}
	s.writeError(w, &apiError{http.StatusBadRequest, "Throttling", "Rate exceeded"})
	return true
}
