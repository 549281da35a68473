package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
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
