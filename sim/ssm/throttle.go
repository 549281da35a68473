package ssm

import (
	"net/http"

	"github.com/joinery/joinery/sim/internal/throttle"
)

// parameterReads is Parameter Store's default throughput: 40 transactions
// a second, shared by GetParameter, GetParameters and GetParametersByPath
// (AWS publishes no burst above it).
var parameterReads = throttle.Limit{Burst: 40, Refill: 40}

// throttled takes the call's token and, when the account's throughput is
// used up, answers SSM's ThrottlingException and reports true.
func (s *Server) throttled(w http.ResponseWriter) bool {
	if s.buckets.Take("parameters", parameterReads, 1) {
		return false
	}
	writeError(w, &apiError{Status: http.StatusBadRequest, Type: "ThrottlingException", Msg: "Rate exceeded"})
	return true
}
