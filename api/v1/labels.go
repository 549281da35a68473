package v1

import "strings"

// Well-known label keys, as Karpenter and Kubernetes define them.
const (
	LabelInstanceType     = "node.kubernetes.io/instance-type"
	LabelZone             = "topology.kubernetes.io/zone"
	LabelRegion           = "topology.kubernetes.io/region"
	LabelArch             = "kubernetes.io/arch"
	LabelOS               = "kubernetes.io/os"
	LabelWindowsBuild     = "node.kubernetes.io/windows-build"
	LabelHostname         = "kubernetes.io/hostname"
	LabelCapacityType     = "karpenter.sh/capacity-type"
	LabelNodePool         = "karpenter.sh/nodepool"
	LabelNodeInitialized  = "karpenter.sh/initialized"
	LabelNodeRegistered   = "karpenter.sh/registered"
	LabelInstanceFamily   = "karpenter.k8s.aws/instance-family"
	LabelInstanceCategory = "karpenter.k8s.aws/instance-category"
	LabelInstanceGen      = "karpenter.k8s.aws/instance-generation"
	LabelInstanceSize     = "karpenter.k8s.aws/instance-size"
	LabelInstanceCPU      = "karpenter.k8s.aws/instance-cpu"
	LabelInstanceCPUManu  = "karpenter.k8s.aws/instance-cpu-manufacturer"
	LabelInstanceMemory   = "karpenter.k8s.aws/instance-memory"
	LabelInstanceHypervis = "karpenter.k8s.aws/instance-hypervisor"
	LabelInstanceGPUCount = "karpenter.k8s.aws/instance-gpu-count"
	LabelInstanceGPUName  = "karpenter.k8s.aws/instance-gpu-name"
	LabelInstanceGPUManu  = "karpenter.k8s.aws/instance-gpu-manufacturer"
	LabelInstanceGPUMem   = "karpenter.k8s.aws/instance-gpu-memory"
	LabelInstanceAccCount = "karpenter.k8s.aws/instance-accelerator-count"
	LabelInstanceAccName  = "karpenter.k8s.aws/instance-accelerator-name"
	LabelInstanceAccManu  = "karpenter.k8s.aws/instance-accelerator-manufacturer"
	LabelInstanceNVMe     = "karpenter.k8s.aws/instance-local-nvme"
	LabelInstanceNetBW    = "karpenter.k8s.aws/instance-network-bandwidth"
	LabelInstanceEBSBW    = "karpenter.k8s.aws/instance-ebs-bandwidth"

	// Capacity types (values of LabelCapacityType).
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeSpot     = "spot"
	// CapacityTypeReserved is capacity bought ahead in an On-Demand
	// Capacity Reservation (EC2NodeClass spec.capacityReservationSelectorTerms).
	CapacityTypeReserved = "reserved"

	// LabelCapacityReservationID is the reservation a reserved node was
	// launched into (Karpenter's karpenter.k8s.aws/capacity-reservation-id).
	LabelCapacityReservationID = "karpenter.k8s.aws/capacity-reservation-id"
	// LabelCapacityReservationType is the reservation's type ("default" or
	// "capacity-block").
	LabelCapacityReservationType = "karpenter.k8s.aws/capacity-reservation-type"
	// LabelPlacementGroupID is the placement group a node was launched into
	// (its class's placementGroupSelector), LabelPlacementGroupPartition
	// its partition in a partition group (Karpenter's labels).
	LabelPlacementGroupID        = "karpenter.k8s.aws/placement-group-id"
	LabelPlacementGroupPartition = "karpenter.k8s.aws/placement-group-partition"
	// LabelCapacityReservationInterruptible is "true" on a node of an
	// interruptible reservation, "false" on other reserved nodes (as
	// Karpenter labels them).
	LabelCapacityReservationInterruptible = "karpenter.k8s.aws/capacity-reservation-interruptible"

	// AnnotationDoNotDisrupt on a pod or node blocks voluntary disruption.
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// AnnotationDisruptionCost on a pod is an int32 cost of evicting it
	// (Karpenter v1.14+): it raises the pod's eviction cost, which
	// consolidation orders and Balanced scores by. Unset, the pod's
	// controller.kubernetes.io/pod-deletion-cost is read instead.
	AnnotationDisruptionCost = "karpenter.sh/disruption-cost"
	// AnnotationDoNotRepair "true" on a Node or NodeClaim blocks node
	// repair, whatever do-not-disrupt says (Karpenter v1.15).
	AnnotationDoNotRepair = "karpenter.sh/do-not-repair"
	// AnnotationNodePoolHash stamps the NodePool template hash at launch (drift).
	AnnotationNodePoolHash = "karpenter.sh/nodepool-hash"
	// AnnotationNodePoolHashVersion stamps the version of the hash function
	// next to it: hashes of different versions are not compared.
	AnnotationNodePoolHashVersion = "karpenter.sh/nodepool-hash-version"
	// AnnotationNodeClaimMinValuesRelaxed says ("true"/"false") whether a
	// NodeClaim's minValues were lowered under MIN_VALUES_POLICY=BestEffort.
	AnnotationNodeClaimMinValuesRelaxed = "karpenter.sh/nodeclaim-min-values-relaxed"

	// TaintKeyDisrupted marks a node being drained (NoSchedule).
	TaintKeyDisrupted = "karpenter.sh/disrupted"
	// TaintKeyUnregistered is put on a Node until Joinery has synced the NodeClaim's labels and taints.
	TaintKeyUnregistered = "karpenter.sh/unregistered"
	// TaintKeyOpening (NoSchedule) replaces the unregistered taint on a
	// node launched for pending pods until, once Ready, those pods are
	// pointed at it: the kube-scheduler then keeps their room rather than
	// giving it to whichever pending pods it takes first.
	TaintKeyOpening = "joinery.sh/opening"

	// TagNodeClaim, TagNodePool and TagCluster are EC2 instance tags Joinery writes at launch.
	TagNodeClaim = "karpenter.sh/nodeclaim"
	TagNodePool  = "karpenter.sh/nodepool"
	TagCluster   = "joinery.sh/cluster"
	// TagName is the EC2 console name tag.
	TagName = "Name"
	// LabelGangPlacementGroup on a gang's NodeClaim is the id of the
	// cluster placement group its try created for the whole gang (the
	// ProvisioningRequest's joinery.sh/placement parameter); it launches
	// there, not in its class's group. TagProvisioningRequest
	// (<namespace>.<name>) and TagCreatedAt (RFC 3339) are on that group,
	// for the garbage collector.
	LabelGangPlacementGroup = "joinery.sh/gang-placement-group"
	TagProvisioningRequest  = "joinery.sh/provisioning-request"
	TagCreatedAt            = "joinery.sh/created-at"
	// TagLaunchBatchPrefix followed by a NodeClaim's name is on every
	// instance of a CreateFleet shared by several NodeClaims, one key per
	// NodeClaim: which instance is whose follows from the batch alone
	// (aws.PairBatch), so a launch that lost its answer finds its instance.
	TagLaunchBatchPrefix = "joinery.sh/launch-batch/"

	// FinalizerTermination keeps a NodeClaim, and its Node, until the
	// node is drained and its instance is gone.
	FinalizerTermination = "karpenter.sh/termination"
	// AnnotationTerminationTimestamp on a deleted NodeClaim is when its
	// termination grace period ends (deletion time + terminationGracePeriod).
	AnnotationTerminationTimestamp = "karpenter.sh/nodeclaim-termination-timestamp"
	// LabelDoNotSyncTaints on a Node: registration leaves its taints alone
	// (the provider manages them), except the unregistered taint.
	LabelDoNotSyncTaints = "karpenter.sh/do-not-sync-taints"
)

// NodeClassLabelKey is the label naming a NodeClaim's node class, on
// NodeClaims and their Nodes: karpenter.k8s.aws/ec2nodeclass for an
// EC2NodeClass (Karpenter's v1.NodeClassLabelKey, group/lowercased kind).
func NodeClassLabelKey(ref *NodeClassReference) string {
	return ref.Group + "/" + strings.ToLower(ref.Kind)
}

// RestrictedLabels may not be set in a NodePool template's labels: Joinery
// sets them itself (as Karpenter does).
var RestrictedLabels = map[string]bool{
	LabelNodePool:        true,
	LabelNodeInitialized: true,
	LabelNodeRegistered:  true,
	LabelHostname:        true,
}

// NormalizedLabels maps deprecated or driver-specific label keys to the
// well-known key a node always carries (Karpenter's v1.NormalizedLabels, with
// the AWS provider's addition for the EBS CSI driver's topology key): a
// requirement on the old key is one on the new.
var NormalizedLabels = map[string]string{
	"failure-domain.beta.kubernetes.io/zone":   LabelZone,
	"failure-domain.beta.kubernetes.io/region": LabelRegion,
	"beta.kubernetes.io/arch":                  LabelArch,
	"beta.kubernetes.io/os":                    LabelOS,
	"beta.kubernetes.io/instance-type":         LabelInstanceType,
	LabelEBSCSIZone:                            LabelZone,
}

// LabelEBSCSIZone is the topology key of the AWS EBS CSI driver: the kubelet
// labels a node with it once the driver's node plugin has registered, and
// older driver versions write it into the node affinity of the volumes they
// provision.
const LabelEBSCSIZone = "topology.ebs.csi.aws.com/zone"

// NormalizeLabelKey returns the well-known key for key (key itself when it
// has no other name).
func NormalizeLabelKey(key string) string {
	if k, ok := NormalizedLabels[key]; ok {
		return k
	}
	return key
}
