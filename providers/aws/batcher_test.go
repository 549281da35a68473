package aws

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a batch run that answers each id with itself and records
// the batches it was given.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	release chan struct{} // when set, runs wait for it
}

func (r *recorder) run(_ context.Context, ids []string) map[string]outcome[string] {
	if r.release != nil {
		<-r.release
	}
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(ids))
	r.mu.Unlock()
	out := map[string]outcome[string]{}
	for _, id := range ids {
		if id != "unanswered" {
			out[id] = outcome[string]{val: "answer-" + id}
		}
	}
	return out
}

func testBatcher(r *recorder, maxIDs int) *batcher[string] {
	return &batcher[string]{idle: 20 * time.Millisecond, maxWait: 500 * time.Millisecond, maxIDs: maxIDs, timeout: time.Minute, run: r.run}
}

// 500 callers at once make 3 calls of at most 200 ids, each caller gets
// its own id's answer, and an id asked for twice is sent once.
func TestBatcherCoalescesConcurrentCallers(t *testing.T) {
	r := &recorder{}
	b := testBatcher(r, 200)
	// Idle long enough that a busy machine's scheduling gaps between the
	// callers do not close a batch early.
	b.idle, b.maxWait = 300*time.Millisecond, 5*time.Second
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		id := fmt.Sprintf("i-%d", i%500)
		wg.Go(func() {
			got, err := b.do(context.Background(), id)
			if err != nil || got != "answer-"+id {
				errs <- fmt.Errorf("%s: %q %v", id, got, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sent := map[string]int{}
	for _, bt := range r.batches {
		if len(bt) > 200 {
			t.Errorf("a batch of %d ids, more than 200", len(bt))
		}
		for _, id := range bt {
			sent[id]++
		}
	}
	if len(r.batches) > 5 || len(sent) != 500 {
		t.Errorf("%d batches for 500 distinct ids (%d sent), want about 3", len(r.batches), len(sent))
	}
}

// A caller that gives up gets its context's error; the batch still runs
// for the others. An id the run leaves out gets errNoAnswer.
func TestBatcherCallerCancelAndMissingAnswer(t *testing.T) {
	r := &recorder{release: make(chan struct{})}
	b := testBatcher(r, 200)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := b.do(ctx, "a"); gaveUp <- err }()
	other := make(chan error, 1)
	go func() { _, err := b.do(context.Background(), "unanswered"); other <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	close(r.release)
	var na errNoAnswer
	if err := <-other; !errors.As(err, &na) {
		t.Fatalf("id left out of the answer: %v, want errNoAnswer", err)
	}
	if len(r.batches) != 1 || len(r.batches[0]) != 2 {
		t.Fatalf("batches %v, want one with both ids", r.batches)
	}
}

// A lone caller waits about the idle window, not the longest wait.
func TestBatcherLoneCallerWaitsTheIdleWindow(t *testing.T) {
	r := &recorder{}
	b := testBatcher(r, 200)
	start := time.Now()
	if _, err := b.do(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 400*time.Millisecond {
		t.Fatalf("a lone Get took %v, want about the 20 ms idle window", d)
	}
}
