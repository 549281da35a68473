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

// Buckets larger than AWS's would make the world kinder than AWS; ones
// too small for a termination batch would stop Joinery for good.
func TestThrottleScaleOutOfRangeRefused(t *testing.T) {
	for scale, why := range map[float64]string{2: "kinder than AWS", 0.05: "below 0.1"} {
		_, err := Start(context.Background(), Options{StateDir: t.TempDir(), ThrottleScale: scale})
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ThrottleScale %g: %v, want a refusal (%s)", scale, err, why)
		}
	}
}
