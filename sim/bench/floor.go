package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/joinery/joinery/cluster"
	"github.com/joinery/joinery/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	applied := time.Now()
	if err := cluster.Apply(ctx, w.Kube.RESTConfig(), objs); err != nil {
		return nil, err
	}
	for {
		list, err := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			created, marked := 0, 0
			var last time.Time
			for i := range list.Items {
				p := &list.Items[i]
				if !strings.HasPrefix(p.Name, "bench-") {
					continue
				}
				created++
				if p.CreationTimestamp.After(last) {
					last = p.CreationTimestamp.Time
				}
				if cluster.IsProvisionable(p) {
					marked++
				}
			}
			if created == pods && f.LastPodCreated == 0 {
				f.LastPodCreated = max(0, last.Add(time.Second).Sub(applied))
			}
			if marked*2 >= pods && f.HalfMarked == 0 {
				f.HalfMarked = time.Since(applied)
			}
			if marked == pods {
				f.AllMarked = time.Since(applied)
				return f, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not every pod marked Unschedulable after %s", time.Since(applied).Round(time.Second))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (f *Floor) print() {
	fmt.Printf("pods %d: last pod created %s, half marked Unschedulable %s, every pod marked %s after the apply\n",
		f.Pods, f.LastPodCreated.Round(time.Millisecond), f.HalfMarked.Round(time.Millisecond), f.AllMarked.Round(time.Millisecond))
}
