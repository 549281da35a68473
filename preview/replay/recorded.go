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
	if labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot {
		return it.SpotPrice()
	}
	return it.OnDemandPrice
}

// nodeSpan is one recorded node's life within the window.
type nodeSpan struct {
	from, to time.Duration // to < 0: still there at the end
	price    float64
}

// Recorded is the recorded cluster's capacity over the window: every
// Node, priced by its labels.
type Recorded struct{ spans []nodeSpan }

// RecordedCapacity reads the recording's nodes: those listed at the start
// and those the watch saw come and go.
func RecordedCapacity(r *record.Recording, cat *catalog.Catalog) Recorded {
	open := map[string]int{} // node name -> index in spans
	var spans []nodeSpan
	add := func(name string, at time.Duration, labels map[string]string) {
		if _, ok := open[name]; ok {
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
	return Recorded{spans: spans}
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
