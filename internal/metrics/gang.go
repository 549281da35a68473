package metrics

import "github.com/prometheus/client_golang/prometheus"

// Gang holds the gang-provisioning collectors (ProvisioningRequests).
type Gang struct {
	// Tries counts gang tries by outcome: provisioned, unplaced (the plan
	// left a pod unplaced: nothing launched), failed (launched, then
	// compensated: every node terminated).
	Tries *prometheus.CounterVec
	// TryNodes counts the nodes gang tries launched, by outcome.
	TryNodes *prometheus.CounterVec
}

func newGang(r *prometheus.Registry) *Gang {
	g := &Gang{
		Tries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_gang_tries_total",
			Help: "All-or-nothing tries of ProvisioningRequests, by outcome (provisioned, unplaced, failed) and reason."}, []string{"outcome", "reason"}),
		TryNodes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_gang_try_nodes_total",
			Help: "Nodes planned by all-or-nothing tries, by the try's outcome (failed: all terminated)."}, []string{"outcome"}),
	}
	r.MustRegister(g.Tries, g.TryNodes)
	return g
}

// GangTry counts one gang try's outcome and its nodes.
func (m *Metrics) GangTry(outcome, reason string, nodes int) {
	if m == nil || m.Gang == nil {
		return
	}
	m.Gang.Tries.WithLabelValues(outcome, reason).Inc()
	m.Gang.TryNodes.WithLabelValues(outcome).Add(float64(nodes))
}
