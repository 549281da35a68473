package main

import (
	"strings"
	"testing"
)

// A passing test's output is left out, a failing one's (with its
// subtests') printed, and the top-level tests listed slowest first.
func TestReport(t *testing.T) {
	events := strings.Join([]string{
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"output","Test":"TestA","Output":"a log\n"}`,
		`{"Action":"pass","Test":"TestA","Elapsed":3.5}`,
		`{"Action":"output","Test":"TestB","Output":"b log\n"}`,
		`{"Action":"output","Test":"TestB/sub","Output":"sub failed\n"}`,
		`{"Action":"fail","Test":"TestB/sub","Elapsed":1}`,
		`{"Action":"fail","Test":"TestB","Elapsed":7.25}`,
		`{"Action":"skip","Test":"TestC","Elapsed":0}`,
		`{"Action":"output","Output":"FAIL\n"}`,
		`{"Action":"fail","Elapsed":11}`,
	}, "\n")
	var out strings.Builder
	failed, err := report(strings.NewReader(events), &out, 5)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v; want failed", failed, err)
	}
	got := out.String()
	for _, want := range []string{"b log\n", "sub failed\n", "FAIL\n", "slowest tests:\n     7.2s  TestB\n     3.5s  TestA\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "a log") {
		t.Errorf("a passing test's output printed:\n%s", got)
	}
	if failed, _ := report(strings.NewReader(`{"Action":"pass","Test":"TestA","Elapsed":1}`), &out, 5); failed {
		t.Error("a passing run reported failed")
	}
}

// Where the tests log the time they held a world, the list ranks by it.
func TestReportRanksByTheWorldHeld(t *testing.T) {
	events := strings.Join([]string{
		`{"Action":"output","Test":"TestA","Output":"    slots_test.go:175: held world slot 4 for 12.5s\n"}`,
		`{"Action":"pass","Test":"TestA","Elapsed":90}`,
		`{"Action":"output","Test":"TestB/sub","Output":"    slots_test.go:175: held world slot 5 for 40.0s\n"}`,
		`{"Action":"pass","Test":"TestB/sub","Elapsed":41}`,
		`{"Action":"pass","Test":"TestB","Elapsed":41}`,
	}, "\n")
	var out strings.Builder
	if _, err := report(strings.NewReader(events), &out, 5); err != nil {
		t.Fatal(err)
	}
	want := "longest holders of a world (its slot, not the wait for one):\n    40.0s  TestB\n    12.5s  TestA\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}
