package interruption

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse: any queue message body either parses into a Message that names
// its kind (with valid instance ids for the kinds that act) or fails with
// ErrMalformed; nothing panics.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 10m ./cloud/interruption/
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, k := range []string{KindSpotInterrupted, KindRebalanceRecommendation, KindScheduledChange, KindInstanceStopped, KindInstanceTerminated} {
		if b, err := Build(Spec{Kind: k, EventID: "e-1", InstanceID: "i-0123456789abcdef0", Time: t0}); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "{}", "null", "[]", `{"detail":null}`, `{"source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","detail":{}}`,
		`{"source":"aws.health","detail-type":"AWS Health Event","detail":{"service":"EC2","affectedEntities":[{"entityValue":"arn:aws:ec2:us-east-1b:instance/i-0123456789abcdef0"}]}}`,
		`{"Type":"Notification","Message":"{}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if m.Kind == "" {
			t.Fatalf("parsed message without a kind: %+v", m)
		}
		switch m.Kind {
		case KindSpotInterrupted, KindScheduledChange, KindInstanceStopped, KindInstanceTerminated, KindRebalanceRecommendation:
			if len(m.InstanceIDs) == 0 {
				t.Fatalf("%s without an instance: %+v", m.Kind, m)
			}
			for _, id := range m.InstanceIDs {
				if got, ok := InstanceID(id); !ok || got != id {
					t.Fatalf("%s names an invalid instance id %q", m.Kind, id)
				}
			}
		}
	})
}
