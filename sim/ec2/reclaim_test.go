package ec2_test

import (
	"context"
	"github.com/joinery/joinery/internal/testwait"
	"sync"
	"testing"
	"time"

	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/joinery/joinery/sim/ec2"
)

// Reclaim takes a running instance away after the delay: shutting-down at
// the due time (the hook fires then), terminated TerminateDelay later. An
// instance terminated before its reclaim is left alone.
func TestReclaimAfterTheNotice(t *testing.T) {
	var mu sync.Mutex
	reclaimed := map[string]time.Time{}
	srv, c := start(t, ec2.Options{BootDelay: -1, TerminateDelay: 50 * time.Millisecond})
	ctx := context.Background()
	sub := subnetsByZone(t, c)
	out, err := c.CreateFleet(ctx, fleet("spot", 2, [][2]string{{"m5.large", sub["us-east-1a"]}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ids := out.Instances[0].InstanceIds
	hook := func(in ec2.Instance) {
		mu.Lock()
		defer mu.Unlock()
		if in.State != ec2.StateShuttingDown {
			t.Errorf("reclaim hook with state %s", in.State)
		}
		reclaimed[in.ID] = time.Now()
	}
	const notice = 300 * time.Millisecond
	t0 := time.Now()
	due, err := srv.Reclaim(ids[0], notice, hook)
	if err != nil {
		t.Fatal(err)
	}
	if d := due.Sub(t0); d < notice || d > notice+50*time.Millisecond {
		t.Errorf("due in %s, want %s", d, notice)
	}
	if _, err := srv.Reclaim(ids[1], notice, hook); err != nil {
		t.Fatal(err)
	}
	// The second instance is terminated by its owner before the reclaim.
	if _, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: ids[1:]}); err != nil {
		t.Fatal(err)
	}
	if in, _ := srv.Instance(ids[0]); in.State != ec2.StateRunning {
		t.Fatalf("state before the reclaim = %s", in.State)
	}
	testwait.Eventually(t, "terminated", 2*time.Second, func() bool {
		in, _ := srv.Instance(ids[0])
		return in.State == ec2.StateTerminated
	})
	time.Sleep(notice) // past the second instance's due time
	mu.Lock()
	defer mu.Unlock()
	at, ok := reclaimed[ids[0]]
	if !ok || at.Sub(t0) < notice {
		t.Errorf("reclaim hook at %s after the warning (fired %v), want >= %s", at.Sub(t0), ok, notice)
	}
	if _, ok := reclaimed[ids[1]]; ok {
		t.Error("the hook fired for an instance already terminated")
	}
	if _, err := srv.Reclaim("i-0123456789abcdef0", time.Second, nil); err == nil {
		t.Error("reclaim of an unknown instance accepted")
	}
	if _, err := srv.Reclaim(ids[0], time.Second, nil); err == nil {
		t.Error("reclaim of a terminated instance accepted")
	}
}
