package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Karpenter holds the karpenter_* collectors: Karpenter v1's metric names,
// types, label sets and buckets (sigs.k8s.io/karpenter pkg/metrics,
// pkg/controllers/{disruption,provisioning/scheduling}, pkg/cloudprovider/
// metrics; the AWS provider's pkg/controllers/interruption), so dashboards
// and alerts written for Karpenter read Joinery. Each is set where the
// event happens (docs/reference/metrics.md says where). The gauges
// Karpenter computes from its cluster state (karpenter_nodes_*,
// karpenter_pods_state, karpenter_nodepools_*) are computed at scrape
// time by the controller (controller/karpentermetrics.go).
type Karpenter struct {
	NodeClaimsCreated    *prometheus.CounterVec // reason, nodepool, min_values_relaxed
	NodeClaimsTerminated *prometheus.CounterVec // nodepool, capacity_type, zone
	NodeClaimsDisrupted  *prometheus.CounterVec // reason, nodepool, capacity_type, consolidation_policy, termination_mode
	NodesCreated         *prometheus.CounterVec // nodepool, zone
	NodesTerminated      *prometheus.CounterVec // nodepool, zone

	SchedulingDuration *prometheus.HistogramVec // controller
	QueueDepth         *prometheus.GaugeVec     // controller, scheduling_id
	UnschedulablePods  *prometheus.GaugeVec     // controller

	DisruptionDecisions       *prometheus.CounterVec   // decision, reason, consolidation_type
	DisruptionDecisionsByPool *prometheus.CounterVec   // nodepool, decision, reason, consolidation_type
	DisruptionEligibleNodes   *prometheus.GaugeVec     // reason
	DisruptionFailedChecks    *prometheus.CounterVec   // consolidation_type
	DisruptionEvaluation      *prometheus.HistogramVec // reason, consolidation_type
	AllowedDisruptions        *prometheus.GaugeVec     // nodepool, reason

	InterruptionReceived      *prometheus.CounterVec // message_type
	InterruptionDeleted       prometheus.Counter
	InterruptionQueueDuration prometheus.Histogram
	InterruptionActions       *prometheus.CounterVec // action_type, nodepool

	// Older names served beside the v1 ones, for the dashboards, alerts and
	// guides written for them (docs/reference/metrics.md lists each).
	ProvisionerSchedulingDuration prometheus.Histogram   // pre-v1 karpenter_provisioner_scheduling_duration_seconds
	InterruptionActionsTotal      *prometheus.CounterVec // action_type, nodepool

	CloudProviderDuration *prometheus.HistogramVec // controller, method, provider
	CloudProviderErrors   *prometheus.CounterVec   // controller, method, provider, error
}

// Karpenter's label values.
const (
	// Controllers (the controller label; Karpenter's controller names).
	ControllerProvisioner = "provisioner"
	ControllerDisruption  = "disruption"
	ControllerLifecycle   = "nodeclaim.lifecycle"
	ControllerGC          = "nodeclaim.garbagecollection"

	// CloudProvider methods (the method label).
	MethodCreate = "Create"
	MethodDelete = "Delete"
	MethodGet    = "Get"
	MethodList   = "List"

	// Errors (the error label of karpenter_cloudprovider_errors_total).
	ErrorInsufficientCapacity = "InsufficientCapacityError"
	ErrorNodeClaimNotFound    = "NodeClaimNotFoundError"
	ErrorNodeClassNotReady    = "NodeClassNotReadyError"

	// Provider is the provider label (Karpenter's AWS provider's name).
	Provider = "aws"
)

// DurationBuckets are Karpenter's duration buckets (controller-runtime's,
// extended to 600 s).
func DurationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
		1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600}
}

func newKarpenter(r *prometheus.Registry) *Karpenter {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	k := &Karpenter{
		NodeClaimsCreated: counter("karpenter_nodeclaims_created_total",
			"Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created, the owning nodepool, and if min values was relaxed for this nodeclaim.",
			"reason", "nodepool", "min_values_relaxed"),
		NodeClaimsTerminated: counter("karpenter_nodeclaims_terminated_total",
			"Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool, capacity type, and zone.",
			"nodepool", "capacity_type", "zone"),
		NodeClaimsDisrupted: counter("karpenter_nodeclaims_disrupted_total",
			"Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted, the owning nodepool, the capacity type, the consolidation policy, and the termination mode.",
			"reason", "nodepool", "capacity_type", "consolidation_policy", "termination_mode"),
		NodesCreated: counter("karpenter_nodes_created_total",
			"Number of nodes created in total by Karpenter. Labeled by owning nodepool and zone.", "nodepool", "zone"),
		NodesTerminated: counter("karpenter_nodes_terminated_total",
			"Number of nodes terminated in total by Karpenter. Labeled by owning nodepool and zone.", "nodepool", "zone"),
		SchedulingDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "karpenter_scheduler_scheduling_duration_seconds",
			Help: "Duration of scheduling simulations used for deprovisioning and provisioning in seconds.", Buckets: DurationBuckets()},
			[]string{"controller"}),
		QueueDepth: gauge("karpenter_scheduler_queue_depth", "The number of pods currently waiting to be scheduled.",
			"controller", "scheduling_id"),
		UnschedulablePods: gauge("karpenter_scheduler_unschedulable_pods_count", "The number of unschedulable Pods.", "controller"),
		DisruptionDecisions: counter("karpenter_voluntary_disruption_decisions_total",
			"Number of disruption decisions performed. Labeled by disruption decision, reason, and consolidation type.",
			"decision", "reason", "consolidation_type"),
		DisruptionDecisionsByPool: counter("karpenter_voluntary_disruption_decisions_by_nodepool_total",
			"Number of disruption decisions performed by nodepool. Labeled by nodepool name, disruption decision, reason, and consolidation type.",
			"nodepool", "decision", "reason", "consolidation_type"),
		DisruptionEligibleNodes: gauge("karpenter_voluntary_disruption_eligible_nodes",
			"Number of nodes eligible for disruption by Karpenter. Labeled by disruption reason.", "reason"),
		DisruptionFailedChecks: counter("karpenter_voluntary_disruption_failed_validations_total",
			"Number of candidates that were selected for disruption but failed validation. Labeled by consolidation type.",
			"consolidation_type"),
		DisruptionEvaluation: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "karpenter_voluntary_disruption_decision_evaluation_duration_seconds",
			Help: "Duration of the disruption decision evaluation process in seconds. Labeled by method and consolidation type.", Buckets: DurationBuckets()},
			[]string{"reason", "consolidation_type"}),
		AllowedDisruptions: gauge("karpenter_nodepools_allowed_disruptions",
			"The number of nodes for a given NodePool that can be concurrently disrupting at a point in time. Labeled by NodePool.",
			"nodepool", "reason"),
		InterruptionReceived: counter("karpenter_interruption_received_messages_total",
			"Count of messages received from the SQS queue. Broken down by message type and whether the message was actionable.",
			"message_type"),
		InterruptionDeleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "karpenter_interruption_deleted_messages_total",
			Help: "Count of messages deleted from the SQS queue."}),
		InterruptionQueueDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "karpenter_interruption_message_queue_duration_seconds",
			Help: "Amount of time an interruption message is on the queue before it is processed by karpenter.", Buckets: DurationBuckets()}),
		InterruptionActions: counter("karpenter_interruption_actions_performed",
			"Number of notification actions performed. Labeled by action", "action_type", "nodepool"),
		ProvisionerSchedulingDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "karpenter_provisioner_scheduling_duration_seconds",
			Help: "Duration of scheduling process in seconds.", Buckets: DurationBuckets()}),
		InterruptionActionsTotal: counter("karpenter_interruption_actions_performed_total",
			"Number of notification actions performed. Labeled by action", "action_type", "nodepool"),
		CloudProviderDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "karpenter_cloudprovider_duration_seconds",
			Help: "Duration of cloud provider method calls. Labeled by the controller, method name and provider."},
			[]string{"controller", "method", "provider"}),
		CloudProviderErrors: counter("karpenter_cloudprovider_errors_total",
			"Total number of errors returned from CloudProvider calls.", "controller", "method", "provider", "error"),
	}
	r.MustRegister(k.NodeClaimsCreated, k.NodeClaimsTerminated, k.NodeClaimsDisrupted, k.NodesCreated, k.NodesTerminated,
		k.SchedulingDuration, k.QueueDepth, k.UnschedulablePods,
		k.DisruptionDecisions, k.DisruptionDecisionsByPool, k.DisruptionEligibleNodes, k.DisruptionFailedChecks,
		k.DisruptionEvaluation, k.AllowedDisruptions,
		k.InterruptionReceived, k.InterruptionDeleted, k.InterruptionQueueDuration, k.InterruptionActions,
		k.ProvisionerSchedulingDuration, k.InterruptionActionsTotal,
		k.CloudProviderDuration, k.CloudProviderErrors)
	// The series alerts divide or rate over exist from the start at 0, so
	// the first error is an increase (as Karpenter starts its consolidation
	// timeouts at 0).
	for _, e := range []string{ErrorInsufficientCapacity, ErrorNodeClassNotReady, ErrorNodeClaimNotFound, ""} {
		k.CloudProviderErrors.WithLabelValues(ControllerLifecycle, MethodCreate, Provider, e)
	}
	for _, e := range []string{ErrorNodeClaimNotFound, ""} {
		k.CloudProviderErrors.WithLabelValues(ControllerLifecycle, MethodDelete, Provider, e)
	}
	for _, c := range []string{"empty", "multi", "single"} {
		k.DisruptionFailedChecks.WithLabelValues(c)
	}
	return k
}

// SnakeCase turns a Karpenter enum (WhenEmptyOrUnderutilized, Drifted)
// into its metric label value (when_empty_or_underutilized, drifted).
func SnakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ConsolidationType is Karpenter's consolidation_type label for a
// Joinery disruption method (emptiness: empty, multi-node: multi,
// single-node: single; drift and the rest: "").
func ConsolidationType(method string) string {
	switch method {
	case "emptiness":
		return "empty"
	case "multi-node":
		return "multi"
	case "single-node":
		return "single"
	}
	return ""
}

// TerminationMode is Karpenter's termination_mode label of a NodeClaim
// with this terminationGracePeriod (nil: graceful, <= 0: forceful, else
// eventual).
func TerminationMode(grace *time.Duration) string {
	switch {
	case grace == nil:
		return "graceful"
	case *grace <= 0:
		return "forceful"
	}
	return "eventual"
}

// NodeClaimCreatedBy counts one NodeClaim created, with Karpenter's
// reason (provisioned, or the disruption reason of a replacement).
func (m *Metrics) NodeClaimCreatedBy(nodePool, reason string, minValuesRelaxed bool) {
	if m == nil {
		return
	}
	m.NodeClaimsCreated.WithLabelValues(nodePool).Inc()
	relaxed := "false"
	if minValuesRelaxed {
		relaxed = "true"
	}
	m.Karpenter.NodeClaimsCreated.WithLabelValues(reason, nodePool, relaxed).Inc()
}

// NodeClaimEnded counts one NodeClaim whose instance was terminated and
// whose object is gone: joinery_nodeclaims_terminated_total by reason,
// karpenter_nodeclaims_terminated_total, and karpenter_nodes_terminated_total
// when it had a Node.
func (m *Metrics) NodeClaimEnded(nodePool, reason, capacityType, zone string, hadNode bool) {
	if m == nil {
		return
	}
	m.NodeClaimsTerminated.WithLabelValues(nodePool, reason).Inc()
	m.Karpenter.NodeClaimsTerminated.WithLabelValues(nodePool, capacityType, zone).Inc()
	if hadNode {
		m.Karpenter.NodesTerminated.WithLabelValues(nodePool, zone).Inc()
	}
}

// NodeClaimDisruptedBy counts one NodeClaim disruption deleted or
// terminated: joinery_nodeclaims_disrupted_total and Karpenter's, reason
// in Karpenter's snake case (empty, underutilized, drifted, expired,
// interruption, ...).
func (m *Metrics) NodeClaimDisruptedBy(nodePool, reason, capacityType, policy, mode string) {
	if m == nil {
		return
	}
	m.NodeClaimsDisrupted.WithLabelValues(nodePool, reason, capacityType).Inc()
	m.Karpenter.NodeClaimsDisrupted.WithLabelValues(reason, nodePool, capacityType, policy, mode).Inc()
}

// Scheduled records one scheduling simulation: its seconds, and the
// pods it left unschedulable, by controller (provisioner, disruption).
func (m *Metrics) Scheduled(controller string, seconds float64, unschedulable int) {
	if m == nil {
		return
	}
	m.Karpenter.SchedulingDuration.WithLabelValues(controller).Observe(seconds)
	if controller == ControllerProvisioner {
		m.Karpenter.ProvisionerSchedulingDuration.Observe(seconds)
		m.Karpenter.UnschedulablePods.WithLabelValues(controller).Set(float64(unschedulable))
	}
}

// SetQueueDepth sets the pods waiting in the controller's scheduling
// (schedulingID: the batch), forgetting earlier batches' series.
func (m *Metrics) SetQueueDepth(controller, schedulingID string, pods int) {
	if m == nil {
		return
	}
	m.Karpenter.QueueDepth.DeletePartialMatch(prometheus.Labels{"controller": controller})
	m.Karpenter.QueueDepth.WithLabelValues(controller, schedulingID).Set(float64(pods))
}

// SetEligibleByReason sets karpenter_voluntary_disruption_eligible_nodes
// for each reason (drifted, empty, underutilized).
func (m *Metrics) SetEligibleByReason(byReason map[string]int) {
	if m == nil {
		return
	}
	for r, n := range byReason {
		m.Karpenter.DisruptionEligibleNodes.WithLabelValues(r).Set(float64(n))
	}
}

// DisruptionActed counts one disruption decision carried out: decision
// delete or replace, Karpenter's reason and consolidation type, once per
// decision and once per NodePool of its nodes.
func (m *Metrics) DisruptionActed(decision, reason, consolidationType string, pools []string) {
	if m == nil {
		return
	}
	m.Karpenter.DisruptionDecisions.WithLabelValues(decision, reason, consolidationType).Inc()
	seen := map[string]bool{}
	for _, p := range pools {
		if !seen[p] {
			seen[p] = true
			m.Karpenter.DisruptionDecisionsByPool.WithLabelValues(p, decision, reason, consolidationType).Inc()
		}
	}
}

// DisruptionValidationFailed counts a decision dropped by its validation.
func (m *Metrics) DisruptionValidationFailed(consolidationType string) {
	if m == nil {
		return
	}
	m.Karpenter.DisruptionFailedChecks.WithLabelValues(consolidationType).Inc()
}

// ObserveDisruptionEvaluation records the seconds one pass's decision took.
func (m *Metrics) ObserveDisruptionEvaluation(reason, consolidationType string, seconds float64) {
	if m == nil {
		return
	}
	m.Karpenter.DisruptionEvaluation.WithLabelValues(reason, consolidationType).Observe(seconds)
}

// SetAllowedDisruptions sets how many more nodes the pool's budget for
// reason lets go now.
func (m *Metrics) SetAllowedDisruptions(nodePool, reason string, n int) {
	if m == nil {
		return
	}
	m.Karpenter.AllowedDisruptions.WithLabelValues(nodePool, reason).Set(float64(n))
}

// InterruptionDequeued records one queue message handled: its kind, and
// how long it was on the queue (since the event's time; zero: unknown).
func (m *Metrics) InterruptionDequeued(kind string, eventTime time.Time, now time.Time) {
	if m == nil {
		return
	}
	m.InterruptionReceived.WithLabelValues(kind).Inc()
	m.Karpenter.InterruptionReceived.WithLabelValues(kind).Inc()
	if !eventTime.IsZero() && !now.Before(eventTime) {
		m.Karpenter.InterruptionQueueDuration.Observe(now.Sub(eventTime).Seconds())
	}
}

// InterruptionMessageDeleted counts one message deleted from the queue.
func (m *Metrics) InterruptionMessageDeleted() {
	if m == nil {
		return
	}
	m.Karpenter.InterruptionDeleted.Inc()
}

// InterruptionActed counts one action an interruption made Joinery take
// on a node of the pool.
func (m *Metrics) InterruptionActed(action, nodePool string) {
	if m == nil {
		return
	}
	m.InterruptionActions.WithLabelValues(action).Inc()
	m.Karpenter.InterruptionActions.WithLabelValues(action, nodePool).Inc()
	m.Karpenter.InterruptionActionsTotal.WithLabelValues(action, nodePool).Inc()
}

// CloudProviderCall records one call of a Karpenter CloudProvider method
// (Create: a launch, Delete: a termination, Get, List) by controller;
// errLabel is "" on success, else the error label (Karpenter's well-known
// error names, "" for any other error).
func (m *Metrics) CloudProviderCall(controller, method string, seconds float64, failed bool, errLabel string) {
	if m == nil {
		return
	}
	m.Karpenter.CloudProviderDuration.WithLabelValues(controller, method, Provider).Observe(seconds)
	if failed {
		m.Karpenter.CloudProviderErrors.WithLabelValues(controller, method, Provider, errLabel).Inc()
	}
}
