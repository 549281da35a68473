// Package repair decides which unhealthy nodes Joinery repairs: Karpenter's
// repair policies (a node condition in a given status for longer than its
// toleration), failing EC2 status checks as one more policy, and a cap on
// how many of a NodePool's nodes may be repaired at once. Pure: the
// controller gathers the signals, the Repair saga acts.
package repair

import "time"

// Condition types the EKS node monitoring agent (and Node Problem
// Detector) set, besides the kubelet's Ready.
const (
	ConditionReady                    = "Ready"
	ConditionAcceleratedHardwareReady = "AcceleratedHardwareReady"
	ConditionStorageReady             = "StorageReady"
	ConditionNetworkingReady          = "NetworkingReady"
	ConditionKernelReady              = "KernelReady"
	ConditionContainerRuntimeReady    = "ContainerRuntimeReady"
	// SignalInstanceStatus is not a node condition: EC2's instance or
	// system status check reported impaired (DescribeInstanceStatus).
	SignalInstanceStatus = "EC2InstanceStatus"
)

// Statuses a Policy matches.
const (
	StatusFalse    = "False"
	StatusUnknown  = "Unknown"
	StatusImpaired = "impaired"
)

// Policy is one repair policy: a node whose signal Type has Status for at
// least Toleration is repaired.
type Policy struct {
	Type       string
	Status     string
	Toleration time.Duration
}

// Key is "Type=Status", how annotations name a policy.
func (p Policy) Key() string { return p.Type + "=" + p.Status }

// DefaultPolicies are Karpenter's AWS repair policies (Ready False or
// Unknown 30 min, AcceleratedHardwareReady 10 min, the other agent
// conditions 30 min) and EC2 status checks impaired for 2 min, the time
// Karpenter's status check controller waits before acting on one.
func DefaultPolicies() []Policy {
	return []Policy{
		{ConditionReady, StatusFalse, 30 * time.Minute},
		{ConditionReady, StatusUnknown, 30 * time.Minute},
		{ConditionAcceleratedHardwareReady, StatusFalse, 10 * time.Minute},
		{ConditionStorageReady, StatusFalse, 30 * time.Minute},
		{ConditionNetworkingReady, StatusFalse, 30 * time.Minute},
		{ConditionKernelReady, StatusFalse, 30 * time.Minute},
		{ConditionContainerRuntimeReady, StatusFalse, 30 * time.Minute},
		{SignalInstanceStatus, StatusImpaired, 2 * time.Minute},
	}
}

// Scaled is policies with every toleration multiplied by scale (tests
// shorten them; scale <= 0 or 1 leaves them as they are).
func Scaled(policies []Policy, scale float64) []Policy {
	out := append([]Policy(nil), policies...)
	if scale <= 0 || scale == 1 {
		return out
	}
	for i := range out {
		out[i].Toleration = time.Duration(float64(out[i].Toleration) * scale)
	}
	return out
}

// Signal is one health signal of a node: a condition (Type, Status, since
// its lastTransitionTime) or an EC2 status check (impaired since).
type Signal struct {
	Type    string
	Status  string
	Since   time.Time
	Reason  string
	Message string
}

// Node is a node of a NodePool with its health signals.
type Node struct {
	Name     string
	NodePool string // empty: a NodeClaim without NodePool (counted cluster-wide)
	Signals  []Signal
	// Repairing: a repair saga already runs for the node.
	Repairing bool
	// DoNotRepair: the Node or its NodeClaim carries
	// karpenter.sh/do-not-repair: "true" (Karpenter v1.15).
	DoNotRepair bool
}
