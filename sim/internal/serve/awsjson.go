package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// JSONError is an error answer of an AWS JSON 1.1 service (SSM, the Price
// List API): the HTTP status, the error type and its message.
type JSONError struct {
	Status int
	Type   string
	Msg    string
}

func (e *JSONError) Error() string { return e.Type + ": " + e.Msg }

// WriteJSONError writes e as the service does: the type in
// X-Amzn-ErrorType and __type, the message under messageKey (services
// differ: SSM says "message", the Price List API "Message").
func WriteJSONError(w http.ResponseWriter, e *JSONError, messageKey string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.Type, messageKey: e.Msg})
}

// JSONOperation is the operation an AWS JSON 1.1 request names in its
// X-Amz-Target after the service's prefix ("AmazonSSM."), or an
// UnknownOperationException naming the protocol (service: "SSM") for a
// request that is no such POST; op is then the header as it came, for the
// request log.
func JSONOperation(r *http.Request, prefix, service string) (op string, err *JSONError) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, prefix)
	if r.Method != http.MethodPost || !ok {
		return op, &JSONError{Status: http.StatusBadRequest, Type: "UnknownOperationException",
			Msg: fmt.Sprintf("this endpoint speaks the %s AWS JSON 1.1 protocol only (X-Amz-Target %q)", service, target)}
	}
	return op, nil
}

// DecodeJSONBody decodes the request's body into in, or is the
// SerializationException the service answers a body it cannot read with.
func DecodeJSONBody(r *http.Request, in any) *JSONError {
	if err := json.NewDecoder(r.Body).Decode(in); err != nil {
		return &JSONError{Status: http.StatusBadRequest, Type: "SerializationException", Msg: "cannot decode the request body: " + err.Error()}
	}
	return nil
}

// WriteJSON writes out as an AWS JSON 1.1 answer with the request id.
func WriteJSON(w http.ResponseWriter, requestID string, out any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("x-amzn-RequestId", requestID)
	_ = json.NewEncoder(w).Encode(out)
}

// RequestIDs hands out x-amzn-RequestId values in AWS's format.
type RequestIDs struct {
	mu sync.Mutex
	n  uint64
}

// Next is a new request id.
func (r *RequestIDs) Next() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", r.n)
}
