package controller

import (
	"context"
	"time"
)

// reconcileLoop runs pass at once, then every `every` and on each trigger
// (after settle, so that a burst of events makes one pass), until ctx ends.
func reconcileLoop(ctx context.Context, every time.Duration, trigger <-chan struct{}, settle time.Duration, pass func(context.Context, time.Time)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pass(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-trigger:
			if settle <= 0 {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
		}
	}
}
