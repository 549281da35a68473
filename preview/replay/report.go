package replay

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Sample is the replaying cluster at a moment of recorded time: its
// nodes, their USD/hour and the pods still pending, beside what the
// recorded cluster had at the same moment.
type Sample struct {
	At       time.Duration `json:"at"` // recorded time since the start
	Replayed Capacity      `json:"replayed"`
	Recorded Capacity      `json:"recorded"`
	Pending  int           `json:"pendingPods"`
	Running  int           `json:"runningPods"`
	// RecordedPending is how many pods of the recorded cluster waited.
	RecordedPending int `json:"recordedPendingPods"`
	// Evicted and Interrupted are the pods Joinery's drains evicted and
	// the spot nodes it drained for an interruption since the previous
	// sample (its Events, events.go); the Recorded ones what the
	// recording shows of the same (recordeddisruption.go).
	Evicted             int `json:"evictedPods"`
	Interrupted         int `json:"spotInterruptions"`
	RecordedEvicted     int `json:"recordedEvictedPods"`
	RecordedInterrupted int `json:"recordedSpotInterruptions"`
}

// Row sums up the samples of one bucket of recorded time: the average
// nodes and USD/hour of each side, and the replay's pending-pod seconds
// (recorded seconds: a pod pending for one sample interval counts the
// interval).
type Row struct {
	From, To          time.Duration
	RecordedNodes     float64 `json:"recordedNodes"`
	ReplayedNodes     float64 `json:"replayedNodes"`
	RecordedUSD       float64 `json:"recordedUSDPerHour"`
	ReplayedUSD       float64 `json:"replayedUSDPerHour"`
	PendingPodSeconds float64 `json:"pendingPodSeconds"`
	// RecordedPendingPodSeconds is the same measure of the recorded pods.
	RecordedPendingPodSeconds float64 `json:"recordedPendingPodSeconds"`
	// Evicted, Interruptions and their recorded counterparts add up the
	// samples' counts.
	Evicted               int `json:"evictedPods"`
	RecordedEvicted       int `json:"recordedEvictedPods"`
	Interruptions         int `json:"spotInterruptions"`
	RecordedInterruptions int `json:"recordedSpotInterruptions"`
}

// Rows buckets samples taken every interval (recorded time) into rows of
// bucket length.
func Rows(samples []Sample, interval, bucket time.Duration) []Row {
	var rows []Row
	var n int
	for _, s := range samples {
		i := int(s.At / bucket)
		for len(rows) <= i {
			k := time.Duration(len(rows))
			rows = append(rows, Row{From: k * bucket, To: (k + 1) * bucket})
			n = 0
		}
		r := &rows[i]
		n++
		avg := func(cur *float64, v float64) { *cur += (v - *cur) / float64(n) }
		avg(&r.RecordedNodes, float64(s.Recorded.Nodes))
		avg(&r.ReplayedNodes, float64(s.Replayed.Nodes))
		avg(&r.RecordedUSD, s.Recorded.USDPerHour)
		avg(&r.ReplayedUSD, s.Replayed.USDPerHour)
		r.PendingPodSeconds += float64(s.Pending) * interval.Seconds()
		r.RecordedPendingPodSeconds += float64(s.RecordedPending) * interval.Seconds()
		r.Evicted += s.Evicted
		r.RecordedEvicted += s.RecordedEvicted
		r.Interruptions += s.Interrupted
		r.RecordedInterruptions += s.RecordedInterrupted
	}
	return rows
}

// WriteTable prints the rows.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "recorded time\tnodes (recorded)\tnodes (replayed)\tUSD/h (recorded)\tUSD/h (replayed)\tpending pod-s (recorded)\tpending pod-s (replayed)\t"+
		"evicted pods (recorded)\tevicted pods (replayed)\tspot interruptions (recorded)\tspot interruptions (replayed)\t")
	var rec, rep float64
	for _, r := range rows {
		fmt.Fprintf(tw, "%s-%s\t%.1f\t%.1f\t%.4f\t%.4f\t%.0f\t%.0f\t%d\t%d\t%d\t%d\t\n", r.From, r.To, r.RecordedNodes, r.ReplayedNodes, r.RecordedUSD, r.ReplayedUSD,
			r.RecordedPendingPodSeconds, r.PendingPodSeconds, r.RecordedEvicted, r.Evicted, r.RecordedInterruptions, r.Interruptions)
		rec += r.RecordedUSD
		rep += r.ReplayedUSD
	}
	if len(rows) > 0 && rec > 0 {
		fmt.Fprintf(tw, "mean\t\t\t%.4f\t%.4f\t(%+.1f%%)\t\t\t\t\t\t\n", rec/float64(len(rows)), rep/float64(len(rows)), 100*(rep-rec)/rec)
	}
	return tw.Flush()
}
