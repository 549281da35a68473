package world

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// serveSimulation is the admin endpoint's handler for one simulation: a
// POSTed JSON Req, whose one duration travels as a Go duration string
// under durKey (e.g. "notice": "2m"), run and answered with its result.
func serveSimulation[Req, Res any](durKey string, setDur func(*Req, time.Duration), run func(context.Context, Req) (Res, error)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(rw, "POST a JSON request", http.StatusMethodNotAllowed)
			return
		}
		req, err := decodeSimulation(r, durKey, setDur)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		res, err := run(r.Context(), req)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(res)
	}
}

func decodeSimulation[Req any](r *http.Request, durKey string, setDur func(*Req, time.Duration)) (Req, error) {
	var req Req
	var fields map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&fields); err != nil {
		return req, fmt.Errorf("bad request: %w", err)
	}
	var dur string
	if raw, ok := fields[durKey]; ok {
		if err := json.Unmarshal(raw, &dur); err != nil {
			return req, fmt.Errorf("bad %s: want a Go duration string such as \"2m\"", durKey)
		}
		delete(fields, durKey)
	}
	rest, _ := json.Marshal(fields)
	if err := json.Unmarshal(rest, &req); err != nil {
		return req, fmt.Errorf("bad request: %w", err)
	}
	if dur != "" {
		d, err := time.ParseDuration(dur)
		if err != nil {
			return req, fmt.Errorf("bad %s: %w", durKey, err)
		}
		setDur(&req, d)
	}
	return req, nil
}
