package ec2

import (
	"context"
	"math/rand/v2"
	"time"
)

// JitterLatency redraws the per-request latency uniformly in [lo, hi] every
// `every` (default 250 ms) until ctx ends, then sets it to 0, so requests see
// a latency that varies between lo and hi. The draws use their own seeded
// generator and do not disturb the ICE and throttle draws.
func (s *Server) JitterLatency(ctx context.Context, lo, hi, every time.Duration, seed uint64) {
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6174656e6379))
	draw := func() time.Duration {
		if hi == lo {
			return lo
		}
		return lo + time.Duration(rng.Int64N(int64(hi-lo)))
	}
	s.SetLatency(draw())
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.SetLatency(0)
				return
			case <-t.C:
				s.SetLatency(draw())
			}
		}
	}()
}
