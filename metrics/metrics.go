// Package metrics defines Joinery's Prometheus metrics (client_golang),
// named joinery_* and registered on one registry the worker serves at /metrics.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds every collector; the zero value is not usable, use New.
type Metrics struct {
	Registry *prometheus.Registry

	// PodsPending is the number of pods the kube-scheduler marked
	// Unschedulable that Joinery has seen and not yet placed.
	PodsPending prometheus.Gauge
	// PodsUnschedulable counts pods the solver could place nowhere.
	PodsUnschedulable prometheus.Counter
	// NodeClaimsCreated / Launched / Registered / Terminated by
	// nodepool, instance_type, capacity_type, zone (empty before launch).
	NodeClaimsCreated    *prometheus.CounterVec
	NodeClaimsLaunched   *prometheus.CounterVec
	NodeClaimsRegistered *prometheus.CounterVec
	NodeClaimsTerminated *prometheus.CounterVec
	// ProvisionDuration is seconds from a batch's Provision workflow start
	// to every NodeClaim of it started.
	ProvisionDuration prometheus.Histogram
	// InvalidNodePools is the number of NodePools skipped for failing validation.
	InvalidNodePools prometheus.Gauge
	// InsufficientCapacity counts offerings CreateFleet reported without capacity.
	InsufficientCapacity *prometheus.CounterVec
	// DisruptionDecisions counts consolidation decisions by reason
	// (empty, drifted, expired, underutilized) and decision (proposed,
	// valid, dropped).
	DisruptionDecisions *prometheus.CounterVec
	// DisruptionEligibleNodes is the number of nodes the last pass could disrupt.
	DisruptionEligibleNodes prometheus.Gauge
	// InterruptionReceived counts interruption queue messages by kind
	// (spot_interrupted, rebalance_recommendation, scheduled_change,
	// instance_stopped, instance_terminated, no_op, unknown, unparsable).
	InterruptionReceived *prometheus.CounterVec
	// InterruptionActions counts what interruptions made Joinery do, by
	// action (CordonAndDrain, Terminate, NoAction).
	InterruptionActions *prometheus.CounterVec
	// CloudRequestDuration is seconds per AWS call by api and error code
	// ("" on success), retries included.
	CloudRequestDuration *prometheus.HistogramVec
	// GarbageCollected counts what garbage collection collected, by kind
	// (instance, nodeclaim, node, launch_template).
	GarbageCollected *prometheus.CounterVec
}

// New creates and registers the collectors, plus the Go and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	labels := []string{"nodepool", "instance_type", "capacity_type", "zone"}
	m := &Metrics{
		Registry: r,
		PodsPending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "joinery_pods_pending",
			Help: "Pods marked Unschedulable by the kube-scheduler and waiting for capacity."}),
		PodsUnschedulable: prometheus.NewCounter(prometheus.CounterOpts{Name: "joinery_pods_unschedulable_total",
			Help: "Pods no NodePool and instance type could hold (an Event on the pod says why)."}),
		NodeClaimsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_nodeclaims_created_total",
			Help: "NodeClaims created by provisioning."}, []string{"nodepool"}),
		NodeClaimsLaunched: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_nodeclaims_launched_total",
			Help: "NodeClaims whose instance CreateFleet launched."}, labels),
		NodeClaimsRegistered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_nodeclaims_registered_total",
			Help: "NodeClaims whose Node registered and became Ready."}, labels),
		NodeClaimsTerminated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_nodeclaims_terminated_total",
			Help: "NodeClaims whose instance was terminated."}, []string{"nodepool", "reason"}),
		ProvisionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "joinery_provision_duration_seconds",
			Help: "Seconds from a Provision workflow's start to all its NodeClaims started.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
		InvalidNodePools: prometheus.NewGauge(prometheus.GaugeOpts{Name: "joinery_nodepools_invalid",
			Help: "NodePools skipped because they failed validation."}),
		InsufficientCapacity: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_cloud_insufficient_capacity_total",
			Help: "Offerings CreateFleet reported as InsufficientInstanceCapacity."}, []string{"instance_type", "zone", "capacity_type"}),
	}
	m.DisruptionDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_disruption_decisions_total",
		Help: "Voluntary disruption decisions by reason and what became of them."}, []string{"reason", "decision"})
	m.DisruptionEligibleNodes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "joinery_disruption_eligible_nodes",
		Help: "Nodes the last consolidation pass could have disrupted."})
	m.CloudRequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "joinery_cloud_request_duration_seconds",
		Help: "AWS API calls by api and error code (empty on success), retries included.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)},
		[]string{"api", "code"})
	r.MustRegister(m.DisruptionDecisions, m.DisruptionEligibleNodes, m.CloudRequestDuration)
	m.InterruptionReceived = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_interruption_received_messages_total",
		Help: "Messages received from the interruption queue, by kind."}, []string{"kind"})
	m.InterruptionActions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_interruption_actions_total",
		Help: "Actions taken on interruption events, by action."}, []string{"action"})
	r.MustRegister(m.InterruptionReceived, m.InterruptionActions)
	m.GarbageCollected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_garbage_collected_total",
		Help: "Objects garbage collection collected, by kind: instance (no NodeClaim), nodeclaim (instance gone), node, launch_template."}, []string{"kind"})
	r.MustRegister(m.GarbageCollected)
	r.MustRegister(m.PodsPending, m.PodsUnschedulable, m.NodeClaimsCreated, m.NodeClaimsLaunched, m.NodeClaimsRegistered,
		m.NodeClaimsTerminated, m.ProvisionDuration, m.InvalidNodePools, m.InsufficientCapacity,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCloud records one AWS call (for cloud.Options.Observe).
func (m *Metrics) ObserveCloud(api, code string, seconds float64) {
	m.CloudRequestDuration.WithLabelValues(api, code).Observe(seconds)
}
