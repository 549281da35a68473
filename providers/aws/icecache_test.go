package aws

import (
	"testing"
	"time"
)

func TestICECacheTTL(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewICECache(0, func() time.Time { return now })
	if c.Unavailable("m5.large", "us-east-1a", "spot") || c.Len() != 0 {
		t.Fatal("empty cache reports an entry")
	}
	c.MarkUnavailable("m5.large", "us-east-1a", "spot")
	now = now.Add(time.Minute)
	c.MarkAll([]OfferingKey{{"m5.large", "us-east-1b", "spot", ""}, {"c5.large", "us-east-1a", "on-demand", ""}})
	if !c.Unavailable("m5.large", "us-east-1a", "spot") || c.Unavailable("m5.large", "us-east-1a", "on-demand") ||
		c.Unavailable("m5.large", "us-east-1c", "spot") || c.Len() != 3 {
		t.Fatalf("after marks: len %d", c.Len())
	}
	now = now.Add(2*time.Minute - time.Nanosecond) // first mark is 1ns short of DefaultICETTL old
	if !c.Unavailable("m5.large", "us-east-1a", "spot") {
		t.Error("expired before the TTL")
	}
	now = now.Add(time.Nanosecond)
	if c.Unavailable("m5.large", "us-east-1a", "spot") || c.Len() != 2 {
		t.Errorf("at the TTL: unavailable=%v len=%d", c.Unavailable("m5.large", "us-east-1a", "spot"), c.Len())
	}
	// A new mark extends an entry.
	c.MarkUnavailable("c5.large", "us-east-1a", "on-demand")
	now = now.Add(2 * time.Minute)
	if c.Len() != 1 || !c.Unavailable("c5.large", "us-east-1a", "on-demand") {
		t.Errorf("re-marked entry: len %d", c.Len())
	}

	short := NewICECache(10*time.Second, func() time.Time { return now })
	short.MarkUnavailable("a", "b", "spot")
	now = now.Add(10 * time.Second)
	if short.Len() != 0 {
		t.Error("custom TTL not honoured")
	}

	var nilCache *ICECache
	nilCache.MarkAll([]OfferingKey{{"a", "b", "c", ""}})
	if nilCache.Unavailable("a", "b", "c") || nilCache.Len() != 0 {
		t.Error("nil cache holds entries")
	}
}

// A mark within a placement group holds only for launches into it; a mark
// everywhere holds for them too.
func TestICECachePlacementGroupScope(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := NewICECache(0, func() time.Time { return now })
	c.MarkAll([]OfferingKey{{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand", PlacementGroup: "pg-1"}})
	c.MarkUnavailable("c5.large", "us-east-1a", "on-demand")
	for _, tc := range []struct {
		group, it string
		want      bool
	}{{"pg-1", "m5.large", true}, {"pg-2", "m5.large", false}, {"", "m5.large", false}, {"pg-1", "c5.large", true}, {"", "c5.large", true}} {
		if got := c.UnavailableIn(tc.group)(tc.it, "us-east-1a", "on-demand"); got != tc.want {
			t.Errorf("%s in %q: %v, want %v", tc.it, tc.group, got, tc.want)
		}
	}
	if c.Unavailable("m5.large", "us-east-1a", "on-demand") {
		t.Error("a group's mark holds outside it")
	}
}

// A launch past a vCPU quota marks the whole quota: every type of the
// bucket, in every zone, as that capacity type; other buckets and the
// other capacity type stay available, and the mark expires with the TTL.
func TestICECacheQuota(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewICECache(0, func() time.Time { return now })
	errs := []FleetError{
		{Offering: OfferingKey{"m5.large", "us-east-1a", "spot", ""}, Code: "MaxSpotInstanceCountExceeded"},
		{Offering: OfferingKey{"c6g.large", "us-east-1b", "spot", ""}, Code: "MaxSpotInstanceCountExceeded"},
		{Offering: OfferingKey{"g5.xlarge", "us-east-1a", "spot", ""}, Code: "InsufficientInstanceCapacity"},
	}
	marks := quotaMarks(errs)
	if len(marks) != 1 || marks[0] != QuotaOffering("standard", "spot") {
		t.Fatalf("quotaMarks = %v, want the Standard spot quota once", marks)
	}
	c.MarkAll(marks)
	for _, o := range []OfferingKey{{"r7i.48xlarge", "us-east-1c", "spot", ""}, {"t3.micro", "us-east-1a", "spot", ""}} {
		if !c.Unavailable(o.InstanceType, o.Zone, o.CapacityType) {
			t.Errorf("%s available past the Standard spot quota", o)
		}
	}
	for _, o := range []OfferingKey{{"m5.large", "us-east-1a", "on-demand", ""}, {"g5.xlarge", "us-east-1a", "spot", ""}} {
		if c.Unavailable(o.InstanceType, o.Zone, o.CapacityType) {
			t.Errorf("%s unavailable: another quota", o)
		}
	}
	if q := quotaMarks([]FleetError{{Offering: OfferingKey{"m5.large", "us-east-1a", "on-demand", ""}, Code: "VcpuLimitExceeded"}}); len(q) != 1 || q[0] != QuotaOffering("standard", "on-demand") {
		t.Errorf("VcpuLimitExceeded marks %v", q)
	}
	now = now.Add(DefaultICETTL)
	if c.Unavailable("m5.large", "us-east-1a", "spot") {
		t.Error("quota mark outlived the TTL")
	}
}
