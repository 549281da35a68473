// Package record captures a cluster's workload and capacity over a window
// (`starter record`) into one file a replay can recreate: the objects as
// they were at the start, then every change the watches saw, each with its
// time. Objects are trimmed to what scheduling and capacity depend on, and
// with Anonymize their names, namespaces and label values are hashed.
package record

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Version is the recording format's version (docs/recording.md).
const Version = "joinery.sh/recording/v1"

// Recording is one capture of a cluster.
type Recording struct {
	Version string    `json:"version"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Anonymized: names, namespaces and label values are hashed (the
	// same value always to the same hash, so selectors still match).
	Anonymized bool `json:"anonymized,omitempty"`
	// Objects are the objects as listed at Start.
	Objects []Object `json:"objects"`
	// Events are the changes seen from Start to End, in order.
	Events []Event `json:"events"`
	// Skipped says what could not be read or parsed, and why.
	Skipped []Skip `json:"skipped,omitempty"`
}

// Object is one trimmed object of a recorded kind.
type Object struct {
	Kind   string         `json:"kind"`
	Object map[string]any `json:"object"`
}

// Event is one change: ADDED, MODIFIED or DELETED at At.
type Event struct {
	At     time.Time      `json:"at"`
	Type   string         `json:"type"`
	Kind   string         `json:"kind"`
	Object map[string]any `json:"object"`
}

// Skip is a kind or an object the recorder could not take.
type Skip struct {
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

// Write writes r as JSON, one line.
func (r *Recording) Write(w io.Writer) error { return json.NewEncoder(w).Encode(r) }

// Read reads a recording and checks its version.
func Read(rd io.Reader) (*Recording, error) {
	var r Recording
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if r.Version != Version {
		return nil, fmt.Errorf("recording: version %q, this starter reads %q", r.Version, Version)
	}
	return &r, nil
}
