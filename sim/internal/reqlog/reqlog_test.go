package reqlog

import (
	"net/url"
	"testing"
)

type req struct {
	op     string
	params url.Values
}

func TestLogRecordsOnlyWhileOn(t *testing.T) {
	var l Log[req]
	built := 0
	add := func(op string) {
		l.Add(func() req { built++; return req{op: op, params: url.Values{"k": {op}}} })
	}
	add("off-before")
	l.SetRecording(true)
	add("A")
	add("B")
	l.SetRecording(false)
	add("off-after")
	if built != 2 {
		t.Fatalf("build called %d times, want 2 (only while recording)", built)
	}
	got := l.Snapshot(func(r req) req { r.params = CloneValues(r.params); return r })
	if len(got) != 2 || got[0].op != "A" || got[1].op != "B" {
		t.Fatalf("Snapshot = %+v, want ops [A B]", got)
	}
	got[0].params["k"][0] = "changed"
	if again := l.Snapshot(nil); again[0].params.Get("k") != "A" {
		t.Fatalf("Snapshot shares params with the log: %q", again[0].params.Get("k"))
	}
	l.SetRecording(true)
	if n := len(l.Snapshot(nil)); n != 2 {
		t.Fatalf("SetRecording(true) cleared the log: %d left, want 2", n)
	}
	l.Reset()
	if n := len(l.Snapshot(nil)); n != 0 {
		t.Fatalf("after Reset %d values, want 0", n)
	}
}

// An entry is amended while it is recorded; after a Reset its Entry names
// nothing, not the value recorded in its place.
func TestAmendNamesItsOwnEntry(t *testing.T) {
	var l Log[req]
	if e := l.Add(func() req { return req{op: "off"} }); e != (Entry{}) {
		t.Fatalf("Add while off returned %+v, want the zero Entry", e)
	}
	l.SetRecording(true)
	a := l.Add(func() req { return req{op: "A"} })
	b := l.Add(func() req { return req{op: "B"} })
	l.Amend(b, func(r *req) { r.op += "-answered" })
	l.Amend(Entry{}, func(r *req) { r.op = "zero" })
	if got := l.Snapshot(nil); got[0].op != "A" || got[1].op != "B-answered" {
		t.Fatalf("after Amend %+v, want A, B-answered", got)
	}
	l.Reset()
	l.Add(func() req { return req{op: "C"} })
	l.Amend(a, func(r *req) { r.op = "stale" })
	if got := l.Snapshot(nil); got[0].op != "C" {
		t.Fatalf("an Entry from before Reset amended %q", got[0].op)
	}
}

func TestCloneValuesIsDeep(t *testing.T) {
	v := url.Values{"a": {"1", "2"}}
	c := CloneValues(v)
	c["a"][0] = "x"
	c.Add("b", "3")
	if v.Get("a") != "1" || v.Has("b") {
		t.Fatalf("original changed: %v", v)
	}
}
