package pricing

import (
	"net/http"

	"github.com/joinery/joinery/sim/internal/throttle"
)

// perAction is the Price List Query API's bucket: each of DescribeServices,
// GetAttributeValues and GetProducts holds 10 tokens, refilled 5 a second,
// per account and Region.
var perAction = throttle.Limit{Burst: 10, Refill: 5}

// throttled takes op's token and, when its bucket is empty, answers the
// API's ThrottlingException (HTTP 429) and reports true.
func (s *Server) throttled(w http.ResponseWriter, op string) bool {
	if s.buckets.Take(op, perAction, 1) {
		return false
	}
	writeError(w, &apiError{Status: http.StatusTooManyRequests, Type: "ThrottlingException", Msg: "Rate exceeded"})
	return true
}
