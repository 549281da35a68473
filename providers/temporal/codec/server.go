package codec

import (
	"net/http"
	"strings"

	"go.temporal.io/sdk/converter"
)

// DefaultUIOrigins are the origins of the local Web UI (`starter dev`)
// that the codec endpoint answers cross-origin requests from by default.
var DefaultUIOrigins = []string{"http://127.0.0.1:8233", "http://localhost:8233"}

// NewHTTPHandler serves the Temporal codec endpoint protocol for the Web
// UI and `temporal` CLI: POST <prefix>/decode (and /encode) with a JSON
// Payloads body, answered with the converted Payloads. Browsers may call it
// from the given origins only (CORS, credentials allowed; "*" allows any
// origin, which gives every web page the user visits the decrypted data:
// do not use it beyond a test); requests without an Origin header (CLI,
// curl) are served as they come, so the endpoint must listen where only
// people allowed to read the data can reach it.
func NewHTTPHandler(k *Keyring, allowedOrigins []string) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(New(k))
	allowed := map[string]bool{}
	for _, o := range allowedOrigins {
		allowed[strings.TrimRight(o, "/")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" {
			if !allowed[origin] && !allowed["*"] {
				http.Error(w, "origin "+origin+" is not allowed (codec-server --ui-origin)", http.StatusForbidden)
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
				h.Set("Access-Control-Max-Age", "600")
				if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
					// A UI served from elsewhere calling an endpoint on loopback.
					h.Set("Access-Control-Allow-Private-Network", "true")
				}
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, 8<<20)
		inner.ServeHTTP(w, r)
	})
}
