package gang

import (
	"strings"
	"testing"

	"github.com/joinery/joinery/api/provreq"
)

func TestPlacementParameter(t *testing.T) {
	for v, want := range map[string]string{"": "?", "cluster": "cluster", "spread": "?", "Cluster": "?"} {
		p := &provreq.ProvisioningRequest{}
		if v != "" {
			p.Spec.Parameters = map[string]string{ParamPlacement: v}
		}
		got, err := Placement(p)
		switch {
		case v == "" && (got != "" || err != nil):
			t.Errorf("no parameter: %q, %v; want none", got, err)
		case v != "" && want == "?" && (err == nil || !strings.Contains(err.Error(), "spec.parameters.joinery.sh/placement")):
			t.Errorf("%q: %q, %v; want an error naming the parameter", v, got, err)
		case want == "cluster" && (got != "cluster" || err != nil):
			t.Errorf("%q: %q, %v", v, got, err)
		}
	}
}

func TestGroupName(t *testing.T) {
	if got := GroupName("prod", "0f3c9a2b-1111-2222", 3); got != "joinery-gang-0f3c9a2b-3-prod" {
		t.Errorf("GroupName: %q", got)
	}
	if got := GroupName(strings.Repeat("c", 300), "u", 1); len(got) != 255 {
		t.Errorf("long cluster name: %d characters, want 255", len(got))
	}
}

func TestPickZone(t *testing.T) {
	plans := []ZonePlan{
		{Zone: "us-east-1a", OK: false, Price: 1},
		{Zone: "us-east-1b", OK: true, Price: 4, Nodes: 4},
		{Zone: "us-east-1c", OK: true, Price: 3, Nodes: 4},
		{Zone: "us-east-1d", OK: true, Price: 3, Nodes: 3},
		{Zone: "us-east-1e", OK: true, Price: 3, Nodes: 3},
	}
	if got := PickZone(plans); got != 3 {
		t.Errorf("PickZone: %d (%s), want 3 (us-east-1d: cheapest, fewest nodes, first)", got, plans[got].Zone)
	}
	if got := PickZone(plans[:1]); got != -1 {
		t.Errorf("no zone places every pod: %d, want -1", got)
	}
}
