package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/joinery/joinery/providers/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// podWatch follows the bench pods through an informer: polling a LIST of
// thousands of pods every 250 ms made kube-apiserver serialize them all
// each time, CPU the measured system then lacked.
type podWatch struct{ lister corelisters.PodLister }

// watchPods starts an informer on the default namespace's pods (stopped
// with ctx) and waits for its cache.
func watchPods(ctx context.Context, kc kubernetes.Interface) (*podWatch, error) {
	f := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace("default"))
	lister := f.Core().V1().Pods().Lister()
	f.Start(ctx.Done())
	for t, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("pod informer (%v) did not sync", t)
		}
	}
	return &podWatch{lister: lister}, nil
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
