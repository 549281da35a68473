package controller

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FeatureGates are the optional behaviours the worker's --feature-gates
// flag turns on or off, with Karpenter's syntax (Key=bool, comma-separated)
// and defaults.
type FeatureGates struct {
	// SpotToSpotConsolidation lets consolidation replace spot nodes by a
	// cheaper spot node (single-node: only with 15 cheaper types, launching
	// the 15 cheapest). Off (Karpenter's default): spot nodes are only
	// deleted, or replaced by on-demand where that is cheaper.
	SpotToSpotConsolidation bool
	// NodeOverlay honours NodeOverlays (karpenter.sh/v1alpha1): their
	// prices and extended capacity in every plan. Off (Karpenter's
	// default, alpha there): NodeOverlays are ignored, and a worker that
	// finds some says so.
	NodeOverlay bool
	// StaticCapacity honours static NodePools (spec.replicas): each is
	// kept at its node count. Off (Karpenter's default, alpha there): a
	// static NodePool is reported not honoured (ValidationSucceeded=False
	// naming the gate, a Warning Event, an error log) and skipped.
	StaticCapacity bool
	// CapacityBuffer honours CapacityBuffers (autoscaling.x-k8s.io): spare
	// capacity for their virtual pods, kept through consolidation. Off
	// (Karpenter's default, alpha there): they are ignored, and a worker
	// that finds some says so.
	CapacityBuffer bool
	// NodeRepair repairs unhealthy nodes (policy/repair, the Repair
	// saga): a node condition past its toleration, or a failing EC2
	// status check, gets the node replaced. Off (Karpenter's default,
	// alpha there).
	NodeRepair bool
	// NodeClassCEL allows CEL expressions in EC2NodeClass spec.kubelet
	// (maxPods, kubeReserved and systemReserved values), evaluated per
	// instance type. Off (Karpenter's default, alpha there): a class
	// with an expression is refused (ValidationSucceeded=False).
	NodeClassCEL bool
}

// The gates Joinery implements.
const (
	FeatureGateSpotToSpotConsolidation = "SpotToSpotConsolidation"
	FeatureGateNodeOverlay             = "NodeOverlay"
	FeatureGateStaticCapacity          = "StaticCapacity"
	FeatureGateCapacityBuffer          = "CapacityBuffer"
	FeatureGateNodeRepair              = "NodeRepair"
	FeatureGateNodeClassCEL            = "NodeClassCEL"
)

var knownGates = FeatureGateSpotToSpotConsolidation + ", " + FeatureGateNodeOverlay + ", " + FeatureGateStaticCapacity + ", " + FeatureGateCapacityBuffer + ", " + FeatureGateNodeRepair + ", " + FeatureGateNodeClassCEL

// karpenterOnlyGates are Karpenter's other gates: accepted when false (so a
// Karpenter FEATURE_GATES value with them off works as is), refused when
// true, since Joinery does not have the feature.
var karpenterOnlyGates = map[string]bool{
	"ReservedCapacity":    true,
	"TerminateFirstDrift": true, "TerminateFirstRepair": true, "PodDeletionCostManagement": true,
}

// ParseFeatureGates reads "Key=bool,Key=bool" (spaces allowed, empty: the
// defaults). An unknown key, a value that is not a bool, or a Karpenter
// feature Joinery lacks set to true is an error naming the gate.
func ParseFeatureGates(s string) (FeatureGates, error) {
	var g FeatureGates
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return FeatureGates{}, fmt.Errorf("--feature-gates: %q is not Key=true or Key=false", item)
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return FeatureGates{}, fmt.Errorf("--feature-gates: %s=%q: the value must be true or false", k, v)
		}
		switch {
		case k == FeatureGateSpotToSpotConsolidation:
			g.SpotToSpotConsolidation = on
		case k == FeatureGateNodeOverlay:
			g.NodeOverlay = on
		case k == FeatureGateStaticCapacity:
			g.StaticCapacity = on
		case k == FeatureGateCapacityBuffer:
			g.CapacityBuffer = on
		case k == FeatureGateNodeRepair:
			g.NodeRepair = on
		case k == FeatureGateNodeClassCEL:
			g.NodeClassCEL = on
		case karpenterOnlyGates[k]:
			if on {
				return FeatureGates{}, fmt.Errorf("--feature-gates: %s=true: Joinery does not implement Karpenter's %s (it may only be false; known gates: %s)",
					k, k, knownGates)
			}
		default:
			return FeatureGates{}, fmt.Errorf("--feature-gates: unknown feature gate %q (known: %s; Karpenter's %s may be set to false)",
				k, knownGates, strings.Join(slices.Sorted(maps.Keys(karpenterOnlyGates)), ", "))
		}
	}
	return g, nil
}

// String is the gates in --feature-gates syntax.
func (g FeatureGates) String() string {
	return fmt.Sprintf("%s=%t,%s=%t,%s=%t,%s=%t,%s=%t,%s=%t", FeatureGateCapacityBuffer, g.CapacityBuffer, FeatureGateNodeClassCEL, g.NodeClassCEL, FeatureGateNodeOverlay, g.NodeOverlay,
		FeatureGateNodeRepair, g.NodeRepair, FeatureGateSpotToSpotConsolidation, g.SpotToSpotConsolidation, FeatureGateStaticCapacity, g.StaticCapacity)
}
