package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Prioritized requests go by the overrides' prices (NodeOverlays), with
// EC2's prioritized strategies; others by EC2's own prices.
func TestFleetInputPrioritized(t *testing.T) {
	req := LaunchRequest{NodeClaim: "a", CapacityType: "on-demand", Configs: []LaunchConfig{{LaunchTemplateName: "t", Overrides: []LaunchOverride{
		{InstanceType: "m5.large", SubnetID: "s1", Zone: "us-east-1a", Price: 0.0672},
		{InstanceType: "c5.large", SubnetID: "s1", Zone: "us-east-1a", Price: 0.085},
	}}}}
	for _, c := range []struct {
		prioritized bool
		ct          string
		want        string
		priorities  []float64
	}{
		{false, "on-demand", "lowest-price", []float64{0, 1}},
		{true, "on-demand", "prioritized", []float64{0.0672, 0.085}},
		{false, "spot", "price-capacity-optimized", []float64{0, 1}},
		{true, "spot", "capacity-optimized-prioritized", []float64{0.0672, 0.085}},
	} {
		req.Prioritized, req.CapacityType = c.prioritized, c.ct
		configs, _, err := fleetConfigs(req)
		if err != nil {
			t.Fatal(err)
		}
		in := fleetInput(req, configs, nil, 1)
		got := ""
		if in.SpotOptions != nil {
			got = string(in.SpotOptions.AllocationStrategy)
		} else {
			got = string(in.OnDemandOptions.AllocationStrategy)
		}
		if got != c.want {
			t.Errorf("prioritized=%v %s: strategy %s, want %s", c.prioritized, c.ct, got, c.want)
		}
		for i, o := range in.LaunchTemplateConfigs[0].Overrides {
			if p := aws.ToFloat64(o.Priority); p != c.priorities[i] {
				t.Errorf("prioritized=%v: override %d priority %v, want %v", c.prioritized, i, p, c.priorities[i])
			}
		}
	}
}
