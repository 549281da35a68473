package controller

import (
	"strings"
	"testing"
)

func TestParseFeatureGates(t *testing.T) {
	cases := []struct {
		in      string
		spot    bool
		wantErr string
	}{
		{"", false, ""},
		{"SpotToSpotConsolidation=true", true, ""},
		{" SpotToSpotConsolidation = true , ", true, ""},
		{"SpotToSpotConsolidation=false", false, ""},
		{"SpotToSpotConsolidation=true,SpotToSpotConsolidation=false", false, ""}, // the last one wins
		// Karpenter's default FEATURE_GATES, with the beta gate turned off.
		{"NodeRepair=false,ReservedCapacity=false,SpotToSpotConsolidation=true,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false", true, ""},
		{"TerminateFirstRepair=true", false, `--feature-gates: TerminateFirstRepair=true: Joinery does not implement Karpenter's TerminateFirstRepair`},
		{"SpotToSpot=true", false, `--feature-gates: unknown feature gate "SpotToSpot" (known: SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer, NodeRepair, NodeClassCEL; Karpenter's PodDeletionCostManagement`},
		{"SpotToSpotConsolidation=yes", false, `--feature-gates: SpotToSpotConsolidation="yes": the value must be true or false`},
		{"SpotToSpotConsolidation", false, `--feature-gates: "SpotToSpotConsolidation" is not Key=true or Key=false`},
	}
	for _, c := range cases {
		g, err := ParseFeatureGates(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("ParseFeatureGates(%q) error %v, want %q...", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || g.SpotToSpotConsolidation != c.spot {
			t.Errorf("ParseFeatureGates(%q) = %+v, %v; want SpotToSpotConsolidation=%v", c.in, g, err, c.spot)
		}
	}
	if g, err := ParseFeatureGates("StaticCapacity=true"); err != nil || !g.StaticCapacity || g.NodeOverlay {
		t.Errorf("StaticCapacity=true: %+v, %v", g, err)
	}
	if g, err := ParseFeatureGates("StaticCapacity=false"); err != nil || g.StaticCapacity {
		t.Errorf("StaticCapacity=false: %+v, %v", g, err)
	}
	if g, err := ParseFeatureGates("CapacityBuffer=true"); err != nil || !g.CapacityBuffer || g.StaticCapacity {
		t.Errorf("CapacityBuffer=true: %+v, %v", g, err)
	}
	if g, err := ParseFeatureGates("NodeOverlay=true"); err != nil || !g.NodeOverlay || g.SpotToSpotConsolidation {
		t.Errorf("NodeOverlay=true: %+v, %v", g, err)
	}
	if g, err := ParseFeatureGates("NodeRepair=true"); err != nil || !g.NodeRepair || g.NodeOverlay {
		t.Errorf("NodeRepair=true: %+v, %v", g, err)
	}
	if g, err := ParseFeatureGates("NodeClassCEL=true"); err != nil || !g.NodeClassCEL || g.NodeRepair {
		t.Errorf("NodeClassCEL=true: %+v, %v", g, err)
	}
	if g, _ := ParseFeatureGates(""); g.NodeClassCEL {
		t.Error("NodeClassCEL is on by default; Karpenter's default is off")
	}
	if s := (FeatureGates{SpotToSpotConsolidation: true}).String(); s != "CapacityBuffer=false,NodeClassCEL=false,NodeOverlay=false,NodeRepair=false,SpotToSpotConsolidation=true,StaticCapacity=false" {
		t.Errorf("String() = %q", s)
	}
}
