package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickGivesDistinctFreePortsOutsideTheEphemeralRange(t *testing.T) {
	ps, err := Pick(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p < low || p >= high {
			t.Errorf("port %d outside %d-%d", p, low, high-1)
		}
		if seen[p] {
			t.Errorf("port %d picked twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("picked port %d is not free: %v", p, err)
			continue
		}
		l.Close()
	}
}

func TestPickFindsTheOneFreePortAndGivesUpWhenNoneIs(t *testing.T) {
	defer func(l, h int) { low, high = l, h }(low, high)
	// A range of three ports; hold two of them.
	low, high = 20000, 20003
	for p := low; p < high-1; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Skipf("port %d busy on this machine", p)
		}
		defer l.Close()
	}
	ps, err := Pick(1)
	if err != nil || len(ps) != 1 || ps[0] != high-1 {
		t.Fatalf("Pick(1) = %v, %v; want [%d]", ps, err, high-1)
	}
	if ps, err := Pick(2); err == nil {
		t.Fatalf("Pick(2) = %v with one free port; want an error", ps)
	}
}
