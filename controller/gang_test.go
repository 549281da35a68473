package controller

import (
	"testing"
	"time"

	"github.com/joinery/joinery/api/provreq"
)

func TestNextGangTry(t *testing.T) {
	now := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	details := func(kv ...string) *provreq.ProvisioningRequest {
		p := &provreq.ProvisioningRequest{Status: provreq.Status{ProvisioningClassDetails: map[string]string{}}}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Status.ProvisioningClassDetails[kv[i]] = kv[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pr   *provreq.ProvisioningRequest
		want int
	}{
		{"new request", details(), 1},
		{"try running (no next try announced)", details(provreq.DetailTry, "1"), 0},
		{"next try announced, not due", details(provreq.DetailTry, "2", provreq.DetailNextTry, now.Add(20*time.Second).Format(time.RFC3339)), 0},
		{"next try due, within the grace: the failed try starts it", details(provreq.DetailTry, "2", provreq.DetailNextTry, now.Add(-30*time.Second).Format(time.RFC3339)), 0},
		{"chain broken: start it", details(provreq.DetailTry, "2", provreq.DetailNextTry, now.Add(-2*time.Minute).Format(time.RFC3339)), 3},
		{"garbage try number", details(provreq.DetailTry, "x"), 1},
	} {
		if got := nextGangTry(tc.pr, now); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
