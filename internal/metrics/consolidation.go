package metrics

import "github.com/prometheus/client_golang/prometheus"

// newConsolidationMetrics creates and registers the Balanced policy's and
// the pod-events controller's collectors.
func (m *Metrics) newConsolidationMetrics(r *prometheus.Registry) {
	m.ConsolidationMoves = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_consolidation_moves_total",
		Help: "Consolidation moves a Balanced NodePool scored, by nodepool and decision (approved, rejected); multi-node search steps count each."},
		[]string{"nodepool", "decision"})
	m.ConsolidationScore = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "joinery_consolidation_score",
		Help:    "Balanced scores of consolidation moves (approved at >= 0.5), by nodepool and decision.",
		Buckets: []float64{0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10}}, []string{"nodepool", "decision"})
	m.PodEventWrites = prometheus.NewCounter(prometheus.CounterOpts{Name: "joinery_nodeclaim_pod_event_writes_total",
		Help: "NodeClaim status.lastPodEventTime writes (at most one per node per 10 s)."})
	r.MustRegister(m.ConsolidationMoves, m.ConsolidationScore, m.PodEventWrites)
}

// ConsolidationScored records one Balanced score of a consolidation move.
func (m *Metrics) ConsolidationScored(nodePool string, score float64, approved bool) {
	if m == nil {
		return
	}
	decision := "rejected"
	if approved {
		decision = "approved"
	}
	m.ConsolidationMoves.WithLabelValues(nodePool, decision).Inc()
	m.ConsolidationScore.WithLabelValues(nodePool, decision).Observe(score)
}

// PodEventWritten counts one lastPodEventTime write.
func (m *Metrics) PodEventWritten() {
	if m == nil {
		return
	}
	m.PodEventWrites.Inc()
}
