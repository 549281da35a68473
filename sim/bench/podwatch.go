package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/providers/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// podWatch follows the bench pods through an informer: polling a LIST of
// thousands of pods every 250 ms made kube-apiserver serialize them all
// each time, CPU the measured system then lacked.
type podWatch struct {
	lister corelisters.PodLister
	mu     sync.Mutex
	// marked is when the informer first saw each bench pod marked
	// Unschedulable (the kube-scheduler's mark, which Joinery waits for).
	marked map[types.UID]time.Time
}

// watchPods starts an informer on the default namespace's pods (stopped
// with ctx) and waits for its cache.
func watchPods(ctx context.Context, kc kubernetes.Interface) (*podWatch, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace("default"))
	inf := f.Core().V1().Pods()
	w := &podWatch{lister: inf.Lister(), marked: map[types.UID]time.Time{}}
	see := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && strings.HasPrefix(p.Name, "bench-") && kube.IsProvisionable(p) {
			w.mu.Lock()
			if _, seen := w.marked[p.UID]; !seen {
				w.marked[p.UID] = time.Now()
			}
			w.mu.Unlock()
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: see, UpdateFunc: func(_, n any) { see(n) },
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	for t, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("pod informer (%v) did not sync", t)
		}
	}
	return w, nil
}

// podCounts are the bench pods seen: created, Running, marked
// Unschedulable, and the latest creation time.
type podCounts struct {
	created, running, marked int
	lastCreated              time.Time
}

func (w *podWatch) counts() podCounts {
	var c podCounts
	pods, _ := w.lister.List(labels.Everything())
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "bench-") {
			continue
		}
		c.created++
		if p.CreationTimestamp.After(c.lastCreated) {
			c.lastCreated = p.CreationTimestamp.Time
		}
		if p.Status.Phase == corev1.PodRunning {
			c.running++
		}
		if kube.IsProvisionable(p) {
			c.marked++
		}
	}
	return c
}

// lastMarked is when the last bench pod was first seen marked
// Unschedulable.
func (w *podWatch) lastMarked() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, at := range w.marked {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// pollEvery calls done every interval until it returns true (nil) or ctx
// ends (its error).
func pollEvery(ctx context.Context, interval time.Duration, done func() bool) error {
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return nil
}
