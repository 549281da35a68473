package pricing

import (
	"net/http"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/serve"
)

// authorize authenticates the request (Options.Guard) and checks
// pricing:<op> (no resource-level permissions: "*"); it writes the
// refusal and returns false when the request must not be served.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, op string) bool {
	if s.opts.Guard == nil {
		return true
	}
	c, f := s.opts.Guard.Authenticate(r, "pricing")
	if f == nil {
		f = s.opts.Guard.Authorize(c, "pricing", op, []awsauth.Check{{Action: "pricing:" + op, Resource: "*", Context: awsauth.Keys{}.Context()}})
	}
	if f != nil {
		writeError(w, serve.JSONAuthError(f, http.StatusBadRequest))
		return false
	}
	return true
}
