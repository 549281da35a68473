package record

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Options tune a recording.
type Options struct {
	// Kinds are the kinds recorded (nil: Kinds).
	Kinds []Kind
	// Now is the clock events are stamped with (nil: time.Now).
	Now func() time.Time
	// Progress, when set, is told each kind's count after the first list.
	Progress func(kind string, objects int)
}

// Record lists every kind, then watches them until ctx ends, and returns
// what it saw. It only reads. A kind the cluster does not serve or the
// caller may not list, and a watch that fails, is noted in Skipped with
// the reason; the rest is recorded.
func Record(ctx context.Context, dc dynamic.Interface, o Options) *Recording {
	if o.Kinds == nil {
		o.Kinds = Kinds
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Recording{Version: Version, Start: o.Now().UTC()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range o.Kinds {
		list, err := dc.Resource(k.Resource).List(ctx, metav1.ListOptions{})
		if err != nil {
			r.Skipped = append(r.Skipped, Skip{Kind: k.Name, Reason: listError(err)})
			continue
		}
		for _, it := range list.Items {
			r.Objects = append(r.Objects, Object{Kind: k.Name, Object: k.Trim(it.Object)})
		}
		if o.Progress != nil {
			o.Progress(k.Name, len(list.Items))
		}
		wg.Add(1)
		go func(k Kind, rv string) {
			defer wg.Done()
			evs, skip := watchKind(ctx, dc, k, rv, o.Now)
			mu.Lock()
			defer mu.Unlock()
			r.Events = append(r.Events, evs...)
			r.Skipped = append(r.Skipped, skip...)
		}(k, list.GetResourceVersion())
	}
	wg.Wait()
	r.End = o.Now().UTC()
	sortEvents(r.Events)
	return r
}

// watchKind collects one kind's changes from resource version rv until
// ctx ends (the watch resumes where it broke off).
func watchKind(ctx context.Context, dc dynamic.Interface, k Kind, rv string, now func() time.Time) ([]Event, []Skip) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return dc.Resource(k.Resource).Watch(ctx, opts)
		},
	})
	if err != nil {
		return nil, []Skip{{Kind: k.Name, Reason: "watch: " + err.Error()}}
	}
	defer w.Stop()
	var evs []Event
	var skips []Skip
	last := map[string]string{} // uid -> the trimmed object last recorded
	changed := func(obj map[string]any) bool {
		md, _ := obj["metadata"].(map[string]any)
		uid, _ := md["uid"].(string)
		b, _ := json.Marshal(obj)
		if uid == "" || last[uid] != string(b) {
			last[uid] = string(b)
			return true
		}
		return false
	}
	for {
		select {
		case <-ctx.Done():
			return evs, skips
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs, append(skips, Skip{Kind: k.Name, Reason: "watch ended before the window: changes after " + now().UTC().Format(time.RFC3339) + " are missing"})
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			switch {
			case ev.Type == watch.Error:
				skips = append(skips, Skip{Kind: k.Name, Reason: fmt.Sprintf("watch error at %s: %v", now().UTC().Format(time.RFC3339), apierrors.FromObject(ev.Object))})
			case !isObj:
				skips = append(skips, Skip{Kind: k.Name, Reason: fmt.Sprintf("%s event with a %T, not an object", ev.Type, ev.Object)})
			case ev.Type == watch.Added || ev.Type == watch.Deleted:
				obj := k.Trim(u.Object)
				changed(obj)
				evs = append(evs, Event{At: now().UTC(), Type: string(ev.Type), Kind: k.Name, Object: obj})
			case ev.Type == watch.Modified:
				// Only changes of what a recording keeps (a node's
				// heartbeat, a pod's IP are not).
				if obj := k.Trim(u.Object); changed(obj) {
					evs = append(evs, Event{At: now().UTC(), Type: string(ev.Type), Kind: k.Name, Object: obj})
				}
			}
		}
	}
}

// listError says why a kind could not be listed.
func listError(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden: the kubeconfig's user may not list it (" + err.Error() + ")"
	case apierrors.IsNotFound(err):
		return "not served by this cluster"
	}
	return "list: " + err.Error()
}

// sortEvents orders events by time (the kinds are watched apart), keeping
// each kind's own order for equal times.
func sortEvents(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
}
