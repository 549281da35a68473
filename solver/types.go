package solver

import (
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// Input is a snapshot of everything a decision depends on.
type Input struct {
	Pods          []Pod       // pending pods to place
	NodePools     []NodePool  // any order; the solver orders by weight desc, then name
	ExistingNodes []Node      // real and in-flight nodes that may take pods
	DaemonSets    []DaemonSet // their pods land on every matching new node
	// ExistingPods are pods already bound to nodes (any node, schedulable
	// or not). They are counted by topology spread and pod (anti-)affinity,
	// and their required anti-affinity keeps matching new pods out of their
	// domains. SimulateRemoval moves the ones on candidate nodes.
	ExistingPods []ExistingPod
	// NamespaceLabels are the labels of the namespaces pods live in, for
	// pod (anti-)affinity namespaceSelectors; a namespace not listed has
	// only kubernetes.io/metadata.name, which the API server sets on each.
	NamespaceLabels map[string]map[string]string
	// Strategies to try (see Solve); empty means DefaultStrategies().
	Strategies []Strategy
	// Budget bounds Solve's search (see Solve): zero (DefaultBudget) is
	// the default search, a fixed schedule of passes; positive a time
	// budget; negative no bound (the whole search). Zero and negative are
	// deterministic. The first plan is always completed, however long it
	// takes.
	Budget time.Duration
	// DisableLPGuided skips the LP-guided passes of Solve (the strategy
	// search runs unseeded), e.g. to measure what they add.
	DisableLPGuided bool
	// MinValuesBestEffort is Karpenter's MIN_VALUES_POLICY=BestEffort: a
	// claim whose types cannot meet a pool's minValues is planned anyway,
	// its requirement's minValues lowered to what its types meet
	// (NewNodeClaim.MinValuesRelaxed), where Strict refuses it.
	MinValuesBestEffort bool
}

// Pod is a pending pod reduced to what scheduling needs.
type Pod struct {
	Namespace, Name, UID string
	// Requests are the effective requests: containers summed, init
	// containers by the Kubernetes rule, pod overhead added; one pod slot
	// (cpu in millicores, memory and storage in bytes, the rest counts).
	Requests resources.List
	// UnknownResources are requested extended resources no node offers.
	UnknownResources []string
	NodeSelector     map[string]string
	// RequiredAffinity holds the ORed terms of
	// requiredDuringSchedulingIgnoredDuringExecution; each term's
	// requirements are ANDed. Empty means no constraint; a term with no
	// requirements matches no node (the Kubernetes rule).
	RequiredAffinity [][]apiv1.NodeSelectorRequirementWithMinValues
	Tolerations      []corev1.Toleration
	// CreationUnix orders equal-sized pods (older first), seconds.
	CreationUnix int64

	// Labels are the pod's labels (matched by topology spread and pod
	// (anti-)affinity selectors).
	Labels map[string]string
	// PreferredAffinity is preferredDuringSchedulingIgnoredDuringExecution
	// node affinity: honoured heaviest first as if required, relaxed one
	// term at a time when it cannot be met.
	PreferredAffinity []WeightedTerm
	// TopologySpread, PodAffinity and PodAntiAffinity are the pod's own
	// fields, on any topology key (topology.go, domains.go).
	TopologySpread  []corev1.TopologySpreadConstraint
	PodAffinity     *corev1.PodAffinity
	PodAntiAffinity *corev1.PodAntiAffinity
	// HostPorts are the host ports the pod's containers bind.
	HostPorts []HostPort
	// VolumeRequirements are what the pod's volumes require of its node
	// (VolumesOf): ORed alternatives, each ANDed with every node-affinity
	// term (typically one alternative, topology.kubernetes.io/zone In [the
	// bound volume's zone]). They constrain the node only: topology spread
	// counts its domains by the pod's own node affinity, as kube-scheduler
	// does.
	VolumeRequirements [][]apiv1.NodeSelectorRequirementWithMinValues
	// Refused, when set, is why the pod cannot be scheduled whatever the
	// node (e.g. its claim does not exist): it is reported unschedulable
	// with this reason and never placed.
	Refused string
}

// refused reports whether the pod is never placed (unknown resources or a
// refusal found before packing).
func (p *Pod) refused() bool { return len(p.UnknownResources) > 0 || p.Refused != "" }

// WeightedTerm is one preferred node-affinity term (weight 1..100).
type WeightedTerm struct {
	Weight       int32
	Requirements []apiv1.NodeSelectorRequirementWithMinValues
}

// HostPort is one bound host port. Two conflict when protocol and port are
// equal and the IPs are equal or either is unspecified ("" or 0.0.0.0).
type HostPort struct {
	Protocol string // "TCP" when empty
	IP       string
	Port     int32
}

// ExistingPod is a pod bound to a node.
type ExistingPod struct {
	Pod  Pod    // labels, namespace, anti-affinity; requests for SimulateRemoval
	Node string // node name
	Zone string // the node's topology.kubernetes.io/zone ("" if unknown)
	// Daemon marks DaemonSet pods: they never move in SimulateRemoval.
	Daemon bool
}

// NodePool is a NodePool with what the solver needs precomputed.
type NodePool struct {
	Name         string
	Weight       int32
	Requirements []apiv1.NodeSelectorRequirementWithMinValues
	Labels       map[string]string // template labels
	// OptionalFreeKeys are free keys whose domains the pool's class defines
	// (a partition group's partitions): a NodeClaim is given a value on one
	// only when topology or its pods ask for it; otherwise its node gets
	// the value at launch (EC2 picks the partition), as in Karpenter.
	OptionalFreeKeys map[string]bool
	Taints           []corev1.Taint // startup taints are not listed: they go away
	// Limits caps the summed capacity of the pool's nodes (cpu millicores,
	// bytes, counts); HasLimit marks which entries are set. NodesLimit < 0
	// means no node-count limit.
	Limits     resources.List
	HasLimit   [resources.Count]bool
	NodesLimit int
	// Usage is the summed capacity of the pool's existing and in-flight
	// nodes; NodeCount their number.
	Usage     resources.List
	NodeCount int
	// CostLimit caps what the pool's nodes cost, USD/hour (the
	// joinery.sh/limit-usd-per-hour annotation), when HasCostLimit;
	// CostUsage is what its existing and in-flight nodes cost. A new claim
	// counts at the dearest offering it may launch as, as it counts its
	// largest capacity against Limits.
	CostLimit    float64
	HasCostLimit bool
	CostUsage    float64
	// InstanceTypes are the types the pool's NodeClass can launch, with
	// node shapes under its kubelet settings and their offerings (only
	// available offerings count).
	InstanceTypes []InstanceTypeOption
}

// InstanceTypeOption is an instance type as a node of one NodePool would see it.
type InstanceTypeOption struct {
	Type      *catalog.InstanceType
	Shape     catalog.NodeShape
	Offerings []catalog.Offering
}

// Node is an existing or in-flight node.
type Node struct {
	Name   string
	Labels map[string]string
	Taints []corev1.Taint
	// Available is allocatable minus the requests of pods bound or
	// nominated to it (cpu millicores, bytes, counts; the Pods entry is the
	// number of free pod slots and must be set).
	Available resources.List
	NodePool  string
	// HostPorts are the host ports already bound on the node.
	HostPorts []HostPort
	// Price is what the node costs, USD/hour (used by SimulateRemoval).
	Price float64
}

// NodesPrice is the USD/hour of the nodes a NodePool owns (owned), or of
// the others (a managed node group's: no plan of Joinery's buys or
// removes them).
func NodesPrice(nodes []Node, owned bool) float64 {
	total := 0.0
	for _, n := range nodes {
		if (n.NodePool != "") == owned {
			total += n.Price
		}
	}
	return total
}

// DaemonSet is a DaemonSet's pod template reduced to scheduling needs.
type DaemonSet struct {
	Namespace, Name string
	Pod             Pod
}

// Plan is the solver's answer.
type Plan struct {
	// ExistingPlacements maps "namespace/name" of a pod to an existing node.
	ExistingPlacements []Placement
	NewNodeClaims      []NewNodeClaim
	Unschedulable      []Unschedulable
}

// Placement binds one pod to one existing node name.
type Placement struct {
	Pod  string `json:"pod"` // namespace/name
	Node string `json:"node"`
}

// NewNodeClaim is one node to launch.
type NewNodeClaim struct {
	NodePool string
	Pods     []string // namespace/name of the pods it was made for
	// Requests are the summed pod requests plus the daemonset overhead of
	// the first (cheapest) instance type.
	Requests resources.List
	// Requirements are the pool's requirements narrowed by the pods'
	// node selectors and affinity (capacity type, zone, arch...).
	Requirements []apiv1.NodeSelectorRequirementWithMinValues
	// InstanceTypes that hold every pod, cheapest compatible available
	// offering first (ties by name), at most MaxInstanceTypes; each carries
	// only the available offerings compatible with Requirements. The first
	// entry's cheapest offering is the plan's price.
	InstanceTypes []InstanceTypeOption
	Labels        map[string]string // template labels
	Taints        []corev1.Taint
	// MinValuesRelaxed says a requirement's minValues was lowered
	// (Input.MinValuesBestEffort): Karpenter's
	// karpenter.sh/nodeclaim-min-values-relaxed.
	MinValuesRelaxed bool
}

// Price is the USD/hour of the cheapest compatible offering of the first
// instance type (0 when there is none).
func (n *NewNodeClaim) Price() float64 {
	if len(n.InstanceTypes) == 0 {
		return 0
	}
	return CheapestOffering(n.InstanceTypes[0].Offerings).Price
}

// Unschedulable is a pod no node can hold, with the reason in words a
// platform engineer can act on (e.g. "no instance type in NodePool
// general-purpose has cpu >= 1000").
type Unschedulable struct {
	Pod    string `json:"pod"` // namespace/name
	Reason string `json:"reason"`
}

// CheapestOffering returns the lowest-priced available offering (zero value if none).
func CheapestOffering(offs []catalog.Offering) catalog.Offering {
	var best catalog.Offering
	found := false
	for _, o := range offs {
		if !o.Available {
			continue
		}
		if !found || o.Price < best.Price || (o.Price == best.Price && o.Zone < best.Zone) {
			best, found = o, true
		}
	}
	return best
}
