package main

import (
	"context"
	"fmt"
	"time"

	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/world"
)

// Floor is what the local control plane alone takes, with no worker: from
// the apply, the ReplicaSet controller creating every pod and the
// kube-scheduler marking every one Unschedulable (PodScheduled=False), the
// mark Joinery, like Karpenter, waits for before it plans a pod.
type Floor struct {
	Pods           int           `json:"pods"`
	LastPodCreated time.Duration `json:"lastPodCreated"`
	HalfMarked     time.Duration `json:"halfMarkedUnschedulable"`
	AllMarked      time.Duration `json:"allMarkedUnschedulable"`
}

// measureFloor applies the bench workloads to a world with no worker and
// polls until every pod is marked Unschedulable.
func measureFloor(ctx context.Context, w *world.World, pods int) (*Floor, error) {
	_, objs, kc, err := benchWorkloads(w, pods)
	if err != nil {
		return nil, err
	}
	f := &Floor{Pods: pods}
	pw, err := watchPods(ctx, kc)
	if err != nil {
		return nil, err
	}
	applied := time.Now()
	if err := kube.Apply(ctx, w.Kube.RESTConfig(), objs); err != nil {
		return nil, err
	}
	err = pollEvery(ctx, 250*time.Millisecond, func() bool {
		c := pw.counts()
		if c.created == pods && f.LastPodCreated == 0 {
			f.LastPodCreated = max(0, c.lastCreated.Add(time.Second).Sub(applied))
		}
		if c.marked*2 >= pods && f.HalfMarked == 0 {
			f.HalfMarked = time.Since(applied)
		}
		f.AllMarked = time.Since(applied)
		return c.marked == pods
	})
	if err != nil {
		return nil, fmt.Errorf("not every pod marked Unschedulable after %s: %w", time.Since(applied).Round(time.Second), err)
	}
	return f, nil
}

func (f *Floor) print() {
	fmt.Printf("pods %d: last pod created %s, half marked Unschedulable %s, every pod marked %s after the apply\n",
		f.Pods, f.LastPodCreated.Round(time.Millisecond), f.HalfMarked.Round(time.Millisecond), f.AllMarked.Round(time.Millisecond))
}
