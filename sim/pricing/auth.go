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
	checks := func() []awsauth.Check {
		return []awsauth.Check{{Action: "pricing:" + op, Resource: "*", Context: awsauth.Keys{}.Context()}}
	}
	return s.opts.Guard.Admit(w, r, "pricing", op, checks, refuse)
}

func refuse(w http.ResponseWriter, f *awsauth.Failure) {
	writeError(w, serve.JSONAuthError(f, http.StatusBadRequest))
}
