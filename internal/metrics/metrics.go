// Package metrics defines Joinery's Prometheus metrics (client_golang),
// named joinery_* and registered on one registry the worker serves at /metrics.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds every collector; the zero value is not usable, use New.
// A nil *Metrics is: its methods then record nothing, so code that may run
// without metrics (unit tests, tools) calls them unguarded.
type Metrics struct {
	Registry *prometheus.Registry
	headroomMetrics

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
	// DisruptionBlockedNodes is, by reason, how many nodes the last
	// consolidation pass did not disrupt for that reason (budget,
	// do_not_disrupt_pod, pdb, no_cheaper_replacement, would_not_fit...).
	DisruptionBlockedNodes *prometheus.GaugeVec
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
	// CloudThrottledRequests counts AWS attempts refused for their rate,
	// by service (EC2, SSM, IAM, Pricing, SQS) and action (throttle.go).
	CloudThrottledRequests *prometheus.CounterVec
	// GarbageCollected counts what garbage collection collected, by kind
	// (instance, nodeclaim, node, launch_template).
	GarbageCollected *prometheus.CounterVec
	// ConsolidationMoves and ConsolidationScore: Balanced scores of
	// consolidation moves by nodepool and decision (approved, rejected);
	// PodEventWrites: lastPodEventTime writes (metrics/consolidation.go).
	ConsolidationMoves *prometheus.CounterVec
	ConsolidationScore *prometheus.HistogramVec
	PodEventWrites     prometheus.Counter
	// NodeClaimsDisrupted counts NodeClaims disruption deleted, by
	// nodepool, reason (expired) and capacity_type (Karpenter's
	// karpenter_nodeclaims_disrupted_total).
	NodeClaimsDisrupted *prometheus.CounterVec
	// CatalogRefreshErrors counts failed refreshes of the live catalog by
	// source (offerings: DescribeInstanceTypeOfferings, spot_prices:
	// DescribeSpotPriceHistory); CatalogRefreshLastSuccess is the Unix
	// time of each source's last successful refresh (absent before one).
	CatalogRefreshErrors      *prometheus.CounterVec
	CatalogRefreshLastSuccess *prometheus.GaugeVec

	// Karpenter holds the karpenter_* collectors (metrics/karpenter.go).
	Karpenter *Karpenter
	// Gang holds the gang-provisioning collectors (metrics/gang.go).
	Gang *Gang
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
	m.DisruptionBlockedNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_disruption_blocked_nodes",
		Help: "Nodes the last consolidation pass did not disrupt, by reason (a node with two reasons counts under both)."}, []string{"reason"})
	r.MustRegister(m.DisruptionDecisions, m.DisruptionEligibleNodes, m.DisruptionBlockedNodes, m.CloudRequestDuration)
	m.CloudThrottledRequests = newCloudThrottled(r)
	m.InterruptionReceived = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_interruption_received_messages_total",
		Help: "Messages received from the interruption queue, by kind."}, []string{"kind"})
	m.InterruptionActions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_interruption_actions_total",
		Help: "Actions taken on interruption events, by action."}, []string{"action"})
	r.MustRegister(m.InterruptionReceived, m.InterruptionActions)
	m.GarbageCollected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_garbage_collected_total",
		Help: "Objects garbage collection collected, by kind: instance (no NodeClaim), nodeclaim (instance gone), node, launch_template."}, []string{"kind"})
	r.MustRegister(m.GarbageCollected)
	m.Gang = newGang(r)
	m.newConsolidationMetrics(r)
	m.newHeadroomMetrics(r)
	m.NodeClaimsDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_nodeclaims_disrupted_total",
		Help: "NodeClaims deleted by disruption, by nodepool, reason (expired) and capacity type."}, []string{"nodepool", "reason", "capacity_type"})
	r.MustRegister(m.NodeClaimsDisrupted)
	m.CatalogRefreshErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_catalog_refresh_errors_total",
		Help: "Failed refreshes of the live catalog, by source (offerings, spot_prices); the last good data, else the embedded data, stays in use."}, []string{"source"})
	m.CatalogRefreshLastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_catalog_refresh_last_success_timestamp_seconds",
		Help: "Unix time of the last successful refresh of the live catalog, by source (offerings, spot_prices)."}, []string{"source"})
	r.MustRegister(m.CatalogRefreshErrors, m.CatalogRefreshLastSuccess)
	m.Karpenter = newKarpenter(r)
	r.MustRegister(m.PodsPending, m.PodsUnschedulable, m.NodeClaimsCreated, m.NodeClaimsLaunched, m.NodeClaimsRegistered,
		m.NodeClaimsTerminated, m.ProvisionDuration, m.InvalidNodePools, m.InsufficientCapacity,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCloud records one AWS call (for cloud.Options.Observe).
func (m *Metrics) ObserveCloud(api, code string, seconds float64) {
	if m == nil {
		return
	}
	m.CloudRequestDuration.WithLabelValues(api, code).Observe(seconds)
}

// SetPodsPending sets the number of pending pods seen and not yet placed.
func (m *Metrics) SetPodsPending(n int) {
	if m == nil {
		return
	}
	m.PodsPending.Set(float64(n))
}

// PodUnschedulable counts one pod the solver could place nowhere.
func (m *Metrics) PodUnschedulable() {
	if m == nil {
		return
	}
	m.PodsUnschedulable.Inc()
}

// NodeClaimLaunched counts one NodeClaim whose instance CreateFleet launched.
func (m *Metrics) NodeClaimLaunched(nodePool, instanceType, capacityType, zone string) {
	if m == nil {
		return
	}
	m.NodeClaimsLaunched.WithLabelValues(nodePool, instanceType, capacityType, zone).Inc()
}

// NodeClaimRegistered counts one NodeClaim whose Node registered and became Ready.
func (m *Metrics) NodeClaimRegistered(nodePool, instanceType, capacityType, zone string) {
	if m == nil {
		return
	}
	m.NodeClaimsRegistered.WithLabelValues(nodePool, instanceType, capacityType, zone).Inc()
	m.Karpenter.NodesCreated.WithLabelValues(nodePool, zone).Inc()
}

// ObserveProvision records the seconds from a Provision workflow's start
// to all its NodeClaims started.
func (m *Metrics) ObserveProvision(seconds float64) {
	if m == nil {
		return
	}
	m.ProvisionDuration.Observe(seconds)
}

// SetInvalidNodePools sets the number of NodePools skipped for failing validation.
func (m *Metrics) SetInvalidNodePools(n int) {
	if m == nil {
		return
	}
	m.InvalidNodePools.Set(float64(n))
}

// OfferingInsufficient counts one offering CreateFleet reported without capacity.
func (m *Metrics) OfferingInsufficient(instanceType, zone, capacityType string) {
	if m == nil {
		return
	}
	m.InsufficientCapacity.WithLabelValues(instanceType, zone, capacityType).Inc()
}

// SetDisruptionEligible sets the number of nodes the last pass could disrupt.
func (m *Metrics) SetDisruptionEligible(n int) {
	if m == nil {
		return
	}
	m.DisruptionEligibleNodes.Set(float64(n))
}

// SetDisruptionBlocked sets the blocked-node gauge of every reason in
// reasons from byReason (absent: 0), so a reason that cleared reads 0.
func (m *Metrics) SetDisruptionBlocked(byReason map[string]int, reasons []string) {
	if m == nil {
		return
	}
	for _, r := range reasons {
		m.DisruptionBlockedNodes.WithLabelValues(r).Set(float64(byReason[r]))
	}
	for r, n := range byReason {
		m.DisruptionBlockedNodes.WithLabelValues(r).Set(float64(n))
	}
}

// DisruptionDecision counts one consolidation decision by reason and what
// became of it (proposed, valid, dropped; rechecked, aborted by the saga).
func (m *Metrics) DisruptionDecision(reason, decision string) {
	if m == nil {
		return
	}
	m.DisruptionDecisions.WithLabelValues(reason, decision).Inc()
}

// Collected counts one object garbage collection collected, by kind.
func (m *Metrics) Collected(kind string) {
	if m == nil {
		return
	}
	m.GarbageCollected.WithLabelValues(kind).Inc()
}

// CatalogRefreshFailed counts one failed refresh of the live catalog's source.
func (m *Metrics) CatalogRefreshFailed(source string) {
	if m == nil {
		return
	}
	m.CatalogRefreshErrors.WithLabelValues(source).Inc()
}

// CatalogRefreshed records a successful refresh of the source at unixSeconds.
func (m *Metrics) CatalogRefreshed(source string, unixSeconds float64) {
	if m == nil {
		return
	}
	m.CatalogRefreshLastSuccess.WithLabelValues(source).Set(unixSeconds)
}
