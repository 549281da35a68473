package ssm

import (
	"net/http"
	"strings"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/serve"
)

// authorize authenticates the request (Options.Guard) and checks
// ssm:<op> on each parameter it reads; it writes the refusal and returns
// false when the request must not be served.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, op string) bool {
	return s.opts.Guard.Admit(w, r, "ssm", op, func() []awsauth.Check { return s.checks(r, op) }, refuse)
}

func refuse(w http.ResponseWriter, f *awsauth.Failure) {
	writeError(w, serve.JSONAuthError(f, http.StatusBadRequest))
}

func (s *Server) checks(r *http.Request, op string) []awsauth.Check {
	var in struct {
		Name  string
		Names []string
	}
	_ = serve.PeekJSON(r, &in) // a bad body is the handler's SerializationException
	names := in.Names
	if op == "GetParameter" {
		names = []string{in.Name}
	}
	var out []awsauth.Check
	for _, n := range names {
		out = append(out, awsauth.Check{Action: "ssm:" + op, Resource: s.parameterARN(n), Context: awsauth.Keys{}.Context()})
	}
	return out
}

// parameterARN: AWS's public parameters (/aws/service/...) belong to no
// account in their ARN.
func (s *Server) parameterARN(name string) string {
	account := s.opts.AccountID
	if strings.HasPrefix(name, "/aws/") {
		account = ""
	}
	return "arn:" + awsauth.Partition(s.opts.Region) + ":ssm:" + s.opts.Region + ":" + account + ":parameter/" + strings.TrimPrefix(name, "/")
}
