package ec2

import (
	"path/filepath"
	"testing"
	"time"
)

func TestStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ec2.json")
	running := make(chan Instance, 4)
	s := New(Options{BootDelay: -1, TerminateDelay: -1, OnRunning: func(i Instance) { running <- i }})
	in1, err := s.launchForTest("m5.large", "on-demand")
	if err != nil {
		t.Fatal(err)
	}
	in2, err := s.launchForTest("c6g.large", "spot")
	if err != nil {
		t.Fatal(err)
	}
	<-running
	<-running
	if err := s.SaveState(path); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r := New(Options{BootDelay: -1, TerminateDelay: -1})
	if err := r.LoadState(path); err != nil {
		t.Fatal(err)
	}
	got := r.Instances()
	if len(got) != 2 || got[0].ID != in1.ID || got[1].ID != in2.ID || got[0].State != StateRunning ||
		got[1].PrivateDNSName != in2.PrivateDNSName || got[1].CapacityType != "spot" {
		t.Fatalf("restored %+v", got)
	}
	// A new launch must not reuse an address of a restored instance.
	in3, err := r.launchForTest("m5.large", "on-demand")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if g.PrivateIP == in3.PrivateIP || g.ID == in3.ID {
			t.Fatalf("new instance %+v collides with restored %+v", in3, g)
		}
	}
}

// launchForTest launches one instance of a type in the first subnet, as a
// CreateFleet override would.
func (s *Server) launchForTest(instanceType, capacityType string) (Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, _ := s.opts.Catalog.Get(instanceType)
	in, err := s.launchLocked(&fleetOverride{it: it, subnet: s.subnets[0]}, capacityType, "fleet-test", "", map[string]string{}, time.Now())
	if err != nil {
		return Instance{}, err
	}
	s.bootLocked(in)
	return in.snapshot(), nil
}
