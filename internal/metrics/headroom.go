package metrics

import "github.com/prometheus/client_golang/prometheus"

// Headroom collectors: per buffer (namespace and name of a CapacityBuffer;
// namespace "nodepool" and the pool's name for a NodePool's
// joinery.sh/headroom).
type headroomMetrics struct {
	// BufferPods: virtual pods the buffer asks for; BufferHeldPods: those
	// placed on existing capacity (Ready nodes and launching NodeClaims).
	BufferPods     *prometheus.GaugeVec
	BufferHeldPods *prometheus.GaugeVec
	// BufferResources: the buffer's summed requests by resource_type
	// (cpu in cores, memory in bytes).
	BufferResources *prometheus.GaugeVec
	// BufferAbsorbedPods counts real pods that landed in the buffer's
	// space; BufferBursts counts bursts absorbed (a run of consecutive
	// buffer checks each absorbing pods counts once).
	BufferAbsorbedPods *prometheus.CounterVec
	BufferBursts       *prometheus.CounterVec
}

func (m *Metrics) newHeadroomMetrics(r *prometheus.Registry) {
	l := []string{"namespace", "name"}
	m.BufferPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_capacity_buffer_pods",
		Help: "Virtual pods a capacity buffer asks for (CapacityBuffer status.replicas, or a NodePool's joinery.sh/headroom)."}, l)
	m.BufferHeldPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_capacity_buffer_held_pods",
		Help: "Virtual pods of a capacity buffer that fit on existing capacity (Ready nodes and launching NodeClaims)."}, l)
	m.BufferResources = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_capacity_buffer_resources",
		Help: "Summed requests of a capacity buffer's virtual pods (cpu in cores, memory in bytes)."}, append(l, "resource_type"))
	m.BufferAbsorbedPods = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_capacity_buffer_absorbed_pods_total",
		Help: "Real pods that landed in a capacity buffer's space: per node that held its virtual pods, the fewer of the virtual pods it lost and the real pods newly bound to it."}, l)
	m.BufferBursts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_capacity_buffer_bursts_absorbed_total",
		Help: "Bursts a capacity buffer absorbed: runs of consecutive buffer checks in which real pods landed in its space."}, l)
	r.MustRegister(m.BufferPods, m.BufferHeldPods, m.BufferResources, m.BufferAbsorbedPods, m.BufferBursts)
}

// SetBuffer sets a buffer's size gauges: virtual pods wanted and held, and
// their summed cpu (cores) and memory (bytes).
func (m *Metrics) SetBuffer(namespace, name string, wanted, held int, cpuCores, memoryBytes float64) {
	if m == nil {
		return
	}
	m.BufferPods.WithLabelValues(namespace, name).Set(float64(wanted))
	m.BufferHeldPods.WithLabelValues(namespace, name).Set(float64(held))
	m.BufferResources.WithLabelValues(namespace, name, "cpu").Set(cpuCores)
	m.BufferResources.WithLabelValues(namespace, name, "memory").Set(memoryBytes)
}

// DeleteBuffer drops a buffer gone from the gauges.
func (m *Metrics) DeleteBuffer(namespace, name string) {
	if m == nil {
		return
	}
	m.BufferPods.DeleteLabelValues(namespace, name)
	m.BufferHeldPods.DeleteLabelValues(namespace, name)
	m.BufferResources.DeleteLabelValues(namespace, name, "cpu")
	m.BufferResources.DeleteLabelValues(namespace, name, "memory")
}

// BufferAbsorbed counts pods a buffer absorbed, and a burst when one began.
func (m *Metrics) BufferAbsorbed(namespace, name string, pods int, burst bool) {
	if m == nil {
		return
	}
	m.BufferAbsorbedPods.WithLabelValues(namespace, name).Add(float64(pods))
	if burst {
		m.BufferBursts.WithLabelValues(namespace, name).Inc()
	}
}
