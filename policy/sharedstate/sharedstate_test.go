package sharedstate

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestOfferingKeys(t *testing.T) {
	o := Offering{"c6a.xlarge", "us-east-1a", "on-demand"}
	k, ok := OfferingKey(o)
	if !ok || k != "c6a.xlarge_us-east-1a_on-demand" {
		t.Fatalf("key = %q %v", k, ok)
	}
	if back, ok := ParseOfferingKey(k); !ok || back != o {
		t.Fatalf("parse(%q) = %+v %v", k, back, ok)
	}
	for _, bad := range []Offering{{"", "z", "spot"}, {"a_b", "z", "spot"}, {"m5.large", "us east", "spot"}} {
		if _, ok := OfferingKey(bad); ok {
			t.Errorf("OfferingKey(%+v) accepted", bad)
		}
	}
	for _, bad := range []string{"a_b", "a__c", "a_b_c_d", ""} {
		if _, ok := ParseOfferingKey(bad); ok {
			t.Errorf("ParseOfferingKey(%q) accepted", bad)
		}
	}
}

func TestOfferingsDecodeAndExpire(t *testing.T) {
	data := map[string]string{
		"c6a.xlarge_us-east-1a_spot":    FormatTime(t0.Add(time.Minute)),
		"m5.large_us-east-1b_on-demand": FormatTime(t0.Add(-time.Second)),
		"m5.large_us-east-1c_on-demand": FormatTime(t0),
		"garbage":                       "x",
		"r6g.large_us-east-1a_spot":     "not a time",
	}
	until, bad := DecodeOfferings(data)
	if len(until) != 3 || !until[Offering{"c6a.xlarge", "us-east-1a", "spot"}].Equal(t0.Add(time.Minute)) {
		t.Errorf("until = %v", until)
	}
	if !reflect.DeepEqual(bad, []string{"garbage", "r6g.large_us-east-1a_spot"}) {
		t.Errorf("bad = %v", bad)
	}
	want := []string{"garbage", "m5.large_us-east-1b_on-demand", "m5.large_us-east-1c_on-demand", "r6g.large_us-east-1a_spot"}
	if got := ExpiredOfferings(data, t0); !reflect.DeepEqual(got, want) {
		t.Errorf("expired = %v, want %v", got, want)
	}
}

func TestPodMemoAcrossReplicas(t *testing.T) {
	ret := map[string]time.Duration{KindUnschedulable: 5 * time.Minute, KindOnExisting: 10 * time.Second}
	var a, b PodMemo
	data := map[string]string{} // the ConfigMap both write to
	k, v := a.Record(KindUnschedulable, []string{"u1", "u2"}, t0, "aaaa")
	if k != "u.1772366400000.aaaa" || v != "u1 u2" {
		t.Fatalf("record = %q %q", k, v)
	}
	data[k] = v
	k, v = b.Record(KindOnExisting, []string{"u3"}, t0.Add(time.Second), "bbbb")
	data[k] = v
	if k2, _ := b.Record(KindOnExisting, nil, t0, "bbbb"); k2 != "" {
		t.Errorf("empty record wrote %q", k2)
	}
	a.Merge(data)
	b.Merge(data)
	for _, m := range []*PodMemo{&a, &b} {
		if at, ok := m.Lookup(KindUnschedulable, "u2"); !ok || !at.Equal(t0) {
			t.Errorf("u2 = %v %v", at, ok)
		}
		if at, ok := m.Lookup(KindOnExisting, "u3"); !ok || !at.Equal(t0.Add(time.Second)) {
			t.Errorf("u3 = %v %v", at, ok)
		}
		if _, ok := m.Lookup(KindOnExisting, "u1"); ok {
			t.Errorf("u1 found under the wrong kind")
		}
	}
	// A later record of the same pod wins.
	k, v = b.Record(KindUnschedulable, []string{"u2"}, t0.Add(time.Minute), "bbbb")
	data[k] = v
	a.Merge(data)
	if at, _ := a.Lookup(KindUnschedulable, "u2"); !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("u2 after the second record = %v", at)
	}
	// Expiry: the on-existing group after 10 s, the first unschedulable one after 5 min.
	if got := a.Expire(t0.Add(20*time.Second), ret); !reflect.DeepEqual(got, []string{"e.1772366401000.bbbb"}) {
		t.Errorf("expired = %v", got)
	}
	if _, ok := a.Lookup(KindOnExisting, "u3"); ok {
		t.Errorf("u3 still found after expiry")
	}
	if got := ExpiredMemo(data, t0.Add(5*time.Minute+time.Second), ret); !reflect.DeepEqual(got, []string{"e.1772366401000.bbbb", "u.1772366400000.aaaa"}) {
		t.Errorf("ExpiredMemo = %v", got)
	}
	// Forget voids everything before it, on the replica that did not write it too.
	fk, fv := a.Forget(t0.Add(2 * time.Minute))
	data[fk] = fv
	b.Merge(data)
	if _, ok := b.Lookup(KindUnschedulable, "u2"); ok {
		t.Errorf("u2 survives the forget marker")
	}
	if got := ExpiredMemo(data, t0.Add(2*time.Minute), ret); len(got) != 3 {
		t.Errorf("after forget ExpiredMemo = %v", got)
	}
}
