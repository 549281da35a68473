package controller

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// throttleLogEvery is how often, at most, one service and action's
// throttling is logged.
const throttleLogEvery = 30 * time.Second

// throttleReporter counts each throttled AWS attempt on the metric and
// logs it, once per throttleLogEvery per service and action with how many
// came meanwhile: under a throttling storm the log says so without a line
// per attempt.
type throttleReporter struct {
	count func(service, action string) // the metric
	log   *zap.Logger
	now   func() time.Time
	mu    sync.Mutex
	seen  map[string]*throttleWindow
}

type throttleWindow struct {
	since  time.Time // the last line's time
	missed int       // attempts not logged since
}

func newThrottleReporter(count func(service, action string), log *zap.Logger) *throttleReporter {
	return &throttleReporter{count: count, log: log, now: time.Now, seen: map[string]*throttleWindow{}}
}

// throttled is the aws.ThrottleFunc.
func (r *throttleReporter) throttled(service, action string) {
	r.count(service, action)
	now := r.now()
	r.mu.Lock()
	w, ok := r.seen[service+"/"+action]
	if ok && now.Sub(w.since) < throttleLogEvery {
		w.missed++
		r.mu.Unlock()
		return
	}
	n := 1
	if ok {
		n += w.missed
	}
	r.seen[service+"/"+action] = &throttleWindow{since: now}
	r.mu.Unlock()
	r.log.Warn("AWS is throttling Joinery's calls; the SDK retries them at an adaptive, lower rate",
		zap.String("service", service), zap.String("action", action), zap.Int("attempts", n),
		zap.Duration("within", throttleLogEvery))
}
