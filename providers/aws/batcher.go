package aws

import (
	"context"
	"sync"
	"time"
)

// batcher gathers the instance ids concurrent callers ask about within a
// short window into one call, so that a thousand activities each waiting
// on one instance make a few EC2 calls a second, not a thousand: a batch
// is sent once no id has joined it for idle, maxWait after its first id,
// or when it holds maxIDs. An id asked for twice in one batch is asked
// once and both callers get its answer.
type batcher[T any] struct {
	idle, maxWait time.Duration
	maxIDs        int
	// timeout bounds one batch's call: it runs on its own context, so no
	// caller that gives up cancels it for the others.
	timeout time.Duration
	// run answers every id of a batch (an id missing from its answer gets
	// errNoAnswer).
	run func(ctx context.Context, ids []string) map[string]outcome[T]

	mu   sync.Mutex
	open *batch[T] // the batch ids join now (nil: none yet)
}

// outcome is one id's answer.
type outcome[T any] struct {
	val T
	err error
}

type batch[T any] struct {
	ids     []string
	has     map[string]bool
	joined  chan struct{} // an id joined (restarts the idle wait)
	full    chan struct{} // closed when the batch holds maxIDs
	done    chan struct{} // closed once results are in
	results map[string]outcome[T]
}

// errNoAnswer is what an id whose batch's answer left it out gets.
type errNoAnswer string

func (e errNoAnswer) Error() string { return "no answer for " + string(e) + " in its batch" }

// do is id's answer, from the batch it joins; ctx only bounds the wait.
func (b *batcher[T]) do(ctx context.Context, id string) (T, error) {
	bt := b.join(id)
	select {
	case <-bt.done:
		o, ok := bt.results[id]
		if !ok {
			o.err = errNoAnswer(id)
		}
		return o.val, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// doAll is every id's answer (ids may span batches).
func (b *batcher[T]) doAll(ctx context.Context, ids []string) map[string]outcome[T] {
	out := make(map[string]outcome[T], len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			v, err := b.do(ctx, id)
			mu.Lock()
			out[id] = outcome[T]{v, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func (b *batcher[T]) join(id string) *batch[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	bt := b.open
	if bt == nil {
		bt = &batch[T]{has: map[string]bool{}, joined: make(chan struct{}, 1), full: make(chan struct{}), done: make(chan struct{})}
		b.open = bt
		go b.send(bt)
	}
	if !bt.has[id] {
		bt.has[id] = true
		bt.ids = append(bt.ids, id)
	}
	if len(bt.ids) >= b.maxIDs {
		b.open = nil // later ids start the next batch
		close(bt.full)
		return bt
	}
	select {
	case bt.joined <- struct{}{}:
	default:
	}
	return bt
}

// send waits for bt to be due, closes it to new ids and runs it.
func (b *batcher[T]) send(bt *batch[T]) {
	deadline := time.NewTimer(b.maxWait)
	defer deadline.Stop()
	idle := time.NewTimer(b.idle)
	defer idle.Stop()
wait:
	for {
		select {
		case <-bt.full:
			break wait
		case <-deadline.C:
			break wait
		case <-idle.C:
			break wait
		case <-bt.joined:
			idle.Reset(b.idle)
		}
	}
	b.mu.Lock()
	if b.open == bt {
		b.open = nil
	}
	ids := bt.ids
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	bt.results = b.run(ctx, ids)
	close(bt.done)
}
