package eks

import (
	"net/http"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/serve"
)

// authorize authenticates the request (Options.Guard) and checks
// eks:DescribeCluster on the cluster it names; it writes the refusal and
// returns false when the request must not be served.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, op, cluster string) bool {
	checks := func() []awsauth.Check {
		arn := "arn:" + awsauth.Partition(s.opts.Region) + ":eks:" + s.opts.Region + ":" + s.opts.AccountID + ":cluster/" + cluster
		return []awsauth.Check{{Action: "eks:" + op, Resource: arn, Context: awsauth.Keys{}.Context()}}
	}
	return s.opts.Guard.Admit(w, r, "eks", op, checks, refuse)
}

func refuse(w http.ResponseWriter, f *awsauth.Failure) {
	e := serve.JSONAuthError(f, http.StatusForbidden)
	writeError(w, e.Status, e.Type, e.Msg)
}
