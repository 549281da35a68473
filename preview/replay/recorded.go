package replay

import (
	"sort"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/record"
)

// Capacity is a cluster's nodes and their USD/hour at a moment.
type Capacity struct {
	Nodes      int
	USDPerHour float64
}

// NodePrice is a node's USD/hour by its labels at the catalog's list
// prices (spot at the catalog's spot estimate), as world.Summarize prices
// the replay's nodes; 0 for a type the catalog does not know.
func NodePrice(cat *catalog.Catalog, labels map[string]string) float64 {
	it, ok := cat.Get(labels[apiv1.LabelInstanceType])
	if !ok {
		return 0
	}
	return it.ListPrice(labels[apiv1.LabelCapacityType])
}

// nodeSpan is one recorded node's life within the window.
type nodeSpan struct {
	from, to time.Duration // to < 0: still there at the end
	price    float64
}

// Recorded is the recorded cluster over the window: every Node, priced by
// its labels, when each pod waited for a node, and what its disruption
// did (recordeddisruption.go).
type Recorded struct {
	spans, pending []nodeSpan
	disruption     recordedDisruption
}

// RecordedCapacity reads the recording's nodes: those listed at the start
// and those the watch saw come and go.
func RecordedCapacity(r *record.Recording, cat *catalog.Catalog) Recorded {
	open := map[string]int{} // node name -> index in spans
	var spans []nodeSpan
	add := func(name string, at time.Duration, labels map[string]string) {
		if i, ok := open[name]; ok {
			// Labels come after registration (the cloud node manager's
			// instance type): the latest price the node had.
			if p := NodePrice(cat, labels); p > 0 {
				spans[i].price = p
			}
			return
		}
		open[name] = len(spans)
		spans = append(spans, nodeSpan{from: at, to: -1, price: NodePrice(cat, labels)})
	}
	for _, o := range r.Objects {
		if o.Kind == "Node" {
			add(nameOf(o.Object), 0, labelsOf(o.Object))
		}
	}
	events := append([]record.Event(nil), r.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At.Before(events[j].At) })
	for _, e := range events {
		if e.Kind != "Node" {
			continue
		}
		at, name := e.At.Sub(r.Start), nameOf(e.Object)
		if e.Type == "DELETED" {
			if i, ok := open[name]; ok {
				spans[i].to = at
				delete(open, name)
			}
			continue
		}
		add(name, at, labelsOf(e.Object))
	}
	return Recorded{spans: spans, pending: pendingSpans(r, events), disruption: readDisruption(r, events)}
}

// pendingSpans are the times pods of the recording waited without a node:
// from the start (a pod listed pending) or its creation until a node was
// named or it went away.
func pendingSpans(r *record.Recording, events []record.Event) []nodeSpan {
	open := map[string]int{}
	var spans []nodeSpan
	see := func(at time.Duration, obj map[string]any, gone bool) {
		uid := uidOf(obj)
		i, waiting := open[uid]
		bound := nodeNameOf(obj) != ""
		switch {
		case waiting && (bound || gone):
			spans[i].to = at
			delete(open, uid)
		case !waiting && !bound && !gone && podPending(obj):
			open[uid] = len(spans)
			spans = append(spans, nodeSpan{from: at, to: -1})
		}
	}
	for _, o := range r.Objects {
		if o.Kind == "Pod" {
			see(0, o.Object, false)
		}
	}
	for _, e := range events {
		if e.Kind == "Pod" {
			see(e.At.Sub(r.Start), e.Object, e.Type == "DELETED")
		}
	}
	return spans
}

// PendingAt is how many recorded pods waited for a node at a moment.
func (r Recorded) PendingAt(at time.Duration) int {
	n := 0
	for _, s := range r.pending {
		if s.from <= at && (s.to < 0 || at < s.to) {
			n++
		}
	}
	return n
}

func uidOf(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	if s, _ := md["uid"].(string); s != "" {
		return s
	}
	ns, _ := md["namespace"].(string)
	return ns + "/" + nameOf(obj)
}

func nodeNameOf(obj map[string]any) string {
	spec, _ := obj["spec"].(map[string]any)
	s, _ := spec["nodeName"].(string)
	return s
}

// podPending: a pod not yet placed and not finished.
func podPending(obj map[string]any) bool {
	st, _ := obj["status"].(map[string]any)
	phase, _ := st["phase"].(string)
	return phase == "" || phase == "Pending"
}

// At is the recorded capacity at a moment of the window.
func (r Recorded) At(at time.Duration) Capacity {
	var c Capacity
	for _, s := range r.spans {
		if s.from <= at && (s.to < 0 || at < s.to) {
			c.Nodes++
			c.USDPerHour += s.price
		}
	}
	return c
}

func nameOf(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

func labelsOf(obj map[string]any) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	in, _ := md["labels"].(map[string]any)
	out := make(map[string]string, len(in))
	for k, v := range in {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
