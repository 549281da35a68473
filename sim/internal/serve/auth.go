package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/joinery/joinery/sim/awsauth"
)

// JSONAuthError is a refusal as the AWS JSON services (SSM, the Price
// List API, EKS) answer it: status is the service's (400 for the JSON 1.1
// services, 403 for EKS), the type names the reason.
func JSONAuthError(f *awsauth.Failure, status int) *JSONError {
	typ := map[awsauth.Kind]string{
		awsauth.MissingAuthentication: "MissingAuthenticationTokenException",
		awsauth.IncompleteSignature:   "IncompleteSignatureException",
		awsauth.UnknownAccessKey:      "UnrecognizedClientException",
		awsauth.SignatureMismatch:     "InvalidSignatureException",
		awsauth.SignatureExpired:      "InvalidSignatureException",
		awsauth.Denied:                "AccessDeniedException",
	}[f.Kind]
	return &JSONError{Status: status, Type: typ, Msg: f.Message}
}

// PeekJSON decodes the request body into v and puts the body back for
// the handler (authorization reads the resource names first).
func PeekJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
