package sqs

import (
	"net/http"
	"strings"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/serve"
)

// authorize authenticates the request (Options.Guard) and checks
// sqs:<op> on the queue it names; it writes the refusal and returns false
// when the request must not be served.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, op string) bool {
	return s.guard.Admit(w, r, "sqs", op, func() []awsauth.Check { return []awsauth.Check{s.check(r, op)} }, refuse)
}

func refuse(w http.ResponseWriter, f *awsauth.Failure) { writeError(w, authError(f)) }

// authError is a refusal as SQS answers it (the JSON protocol's type, and
// the Query error code its SDK reads from x-amzn-query-error).
func authError(f *awsauth.Failure) *apiError {
	switch f.Kind {
	case awsauth.MissingAuthentication:
		return &apiError{http.StatusForbidden, "MissingAuthenticationTokenException", "MissingAuthenticationToken", f.Message}
	case awsauth.UnknownAccessKey:
		return &apiError{http.StatusForbidden, "UnrecognizedClientException", "InvalidClientTokenId", f.Message}
	case awsauth.SignatureMismatch, awsauth.SignatureExpired:
		return &apiError{http.StatusForbidden, "InvalidSignatureException", "SignatureDoesNotMatch", f.Message}
	case awsauth.Denied:
		return &apiError{http.StatusForbidden, "AccessDeniedException", "AccessDenied", f.Message}
	}
	return &apiError{http.StatusBadRequest, "IncompleteSignatureException", "IncompleteSignature", f.Message}
}

// check: the operation on the queue of QueueUrl (or QueueName); ListQueues
// has no resource.
func (s *Server) check(r *http.Request, op string) awsauth.Check {
	var in struct{ QueueUrl, QueueName string }
	_ = serve.PeekJSON(r, &in) // a bad body is the handler's SerializationException
	res := "*"
	name := in.QueueName
	if in.QueueUrl != "" {
		name = in.QueueUrl[strings.LastIndex(in.QueueUrl, "/")+1:]
	}
	if op != "ListQueues" {
		res = "arn:" + awsauth.Partition(s.region) + ":sqs:" + s.region + ":" + s.account + ":" + name
	}
	return awsauth.Check{Action: "sqs:" + op, Resource: res, Context: awsauth.Keys{}.Context()}
}
