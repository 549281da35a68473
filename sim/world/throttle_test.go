package world

import (
	"context"
	"strings"
	"testing"
)

// The buckets and the queue's duplicates are on unless a test says no.
func TestAWSRealismDefaults(t *testing.T) {
	for _, c := range []struct {
		o              Options
		scale, dupProb float64
	}{
		{Options{}, DefaultThrottleScale, DefaultQueueDuplicates},
		{Options{ThrottleScale: 0.5, QueueDuplicates: 0.01}, 0.5, 0.01},
		{Options{ThrottleScale: -1, QueueDuplicates: -1}, 0, 0},
	} {
		if got := c.o.throttleScale(); got != c.scale {
			t.Errorf("%+v: throttle scale %v, want %v", c.o, got, c.scale)
		}
		if got := c.o.queueDuplicates(); got != c.dupProb {
			t.Errorf("%+v: queue duplicates %v, want %v", c.o, got, c.dupProb)
		}
	}
}

// Buckets larger than AWS's would make the world kinder than AWS.
func TestThrottleScaleAboveOneRefused(t *testing.T) {
	_, err := Start(context.Background(), Options{StateDir: t.TempDir(), ThrottleScale: 2})
	if err == nil || !strings.Contains(err.Error(), "kinder than AWS") {
		t.Fatalf("ThrottleScale 2: %v, want a refusal", err)
	}
}
