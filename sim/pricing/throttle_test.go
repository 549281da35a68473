package pricing

import (
	"net/http"
	"testing"
)

// Each action's bucket (scaled to 1 call here): the second GetProducts in
// the second answers ThrottlingException, HTTP 429, as the API does.
func TestThrottlingException(t *testing.T) {
	s := New(Options{ThrottleScale: 0.1})
	body := `{"ServiceCode":"AmazonEC2","MaxResults":1}`
	if code, out := call(t, s, body); code != http.StatusOK {
		t.Fatalf("first call: %d %v", code, out)
	}
	code, out := call(t, s, body)
	if code != http.StatusTooManyRequests || out["__type"] != "ThrottlingException" || out["Message"] != "Rate exceeded" {
		t.Fatalf("second call in the second: %d %v, want 429 ThrottlingException Rate exceeded", code, out)
	}
}
