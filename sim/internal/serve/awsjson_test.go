package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A POST with the service's prefix names its operation; anything else is
// an UnknownOperationException naming the protocol, with the header as it
// came for the request log.
func TestJSONOperation(t *testing.T) {
	req := func(method, target string) *http.Request {
		r := httptest.NewRequest(method, "/", nil)
		r.Header.Set("X-Amz-Target", target)
		return r
	}
	if op, err := JSONOperation(req(http.MethodPost, "AmazonSSM.GetParameter"), "AmazonSSM.", "SSM"); op != "GetParameter" || err != nil {
		t.Errorf("POST AmazonSSM.GetParameter: %q %v", op, err)
	}
	for _, r := range []*http.Request{req(http.MethodGet, "AmazonSSM.GetParameter"), req(http.MethodPost, "Other.GetParameter")} {
		op, err := JSONOperation(r, "AmazonSSM.", "SSM")
		want := `this endpoint speaks the SSM AWS JSON 1.1 protocol only (X-Amz-Target "` + r.Header.Get("X-Amz-Target") + `")`
		if err == nil || err.Type != "UnknownOperationException" || err.Status != http.StatusBadRequest || err.Msg != want {
			t.Errorf("%s %s: %+v, want UnknownOperationException %q", r.Method, r.Header.Get("X-Amz-Target"), err, want)
		}
		if wantOp := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSSM."); op != wantOp {
			t.Errorf("%s %s: op %q, want %q", r.Method, r.Header.Get("X-Amz-Target"), op, wantOp)
		}
	}
}

func TestDecodeJSONBodyAndWriteJSON(t *testing.T) {
	var in struct{ Name string }
	if err := DecodeJSONBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"Name":"x"}`)), &in); err != nil || in.Name != "x" {
		t.Errorf("decode: %+v %v", in, err)
	}
	err := DecodeJSONBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{`)), &in)
	if err == nil || err.Type != "SerializationException" || !strings.HasPrefix(err.Msg, "cannot decode the request body: ") {
		t.Errorf("bad body: %+v", err)
	}
	w := httptest.NewRecorder()
	WriteJSON(w, "id-1", map[string]string{"a": "b"})
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/x-amz-json-1.1" || w.Header().Get("x-amzn-RequestId") != "id-1" || w.Body.String() != "{\"a\":\"b\"}\n" {
		t.Errorf("answer %d %v %q", w.Code, w.Header(), w.Body.String())
	}
}
