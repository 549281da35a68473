package minvalues

import (
	"reflect"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
)

func TestWiden(t *testing.T) {
	cat := catalog.MustDefault()
	opt := func(name string, price float64) solver.InstanceTypeOption {
		it, ok := cat.Get(name)
		if !ok {
			t.Fatalf("no %s in the catalog", name)
		}
		return solver.InstanceTypeOption{Type: it, Offerings: []catalog.Offering{{Zone: "us-east-1a", CapacityType: "spot", Price: price, Available: true}}}
	}
	families := func(n int) []apiv1.NodeSelectorRequirementWithMinValues {
		return []apiv1.NodeSelectorRequirementWithMinValues{{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpExists, MinValues: &n}}
	}
	m5, c6a, r5, m6i := opt("m5.large", 0.04), opt("c6a.large", 0.03), opt("r5.large", 0.05), opt("m6i.large", 0.045)
	names := func(opts []solver.InstanceTypeOption) []string {
		var out []string
		for _, o := range opts {
			out = append(out, o.Type.Name)
		}
		return out
	}
	cases := []struct {
		name     string
		mv       []apiv1.NodeSelectorRequirementWithMinValues
		have     []solver.InstanceTypeOption
		more     []solver.InstanceTypeOption
		maxTypes int
		add      []string
		tried    int
		ok       bool
	}{
		{"already met", families(1), []solver.InstanceTypeOption{m5}, []solver.InstanceTypeOption{c6a}, 60, nil, 2, true},
		{"cheapest other first", families(2), []solver.InstanceTypeOption{m5}, []solver.InstanceTypeOption{r5, c6a}, 60, []string{"c6a.large"}, 3, true},
		{"as many as needed", families(3), []solver.InstanceTypeOption{m5}, []solver.InstanceTypeOption{r5, c6a, m6i}, 60, []string{"c6a.large", "m6i.large"}, 4, true},
		{"one family twice does not count", families(2), []solver.InstanceTypeOption{m5}, []solver.InstanceTypeOption{opt("m5.xlarge", 0.08)}, 60, nil, 2, false},
		{"cut at maxTypes", families(3), []solver.InstanceTypeOption{m5}, []solver.InstanceTypeOption{r5, c6a}, 2, nil, 2, false},
		{"nothing more to try", families(2), []solver.InstanceTypeOption{m5}, nil, 60, nil, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			add, tried, ok := Widen(c.mv, c.have, c.more, c.maxTypes)
			if ok != c.ok || tried != c.tried || !reflect.DeepEqual(names(add), c.add) {
				t.Fatalf("Widen = %v, %d, %v; want %v, %d, %v", names(add), tried, ok, c.add, c.tried, c.ok)
			}
		})
	}
}

func TestOfAndKeys(t *testing.T) {
	two, zero := 2, 0
	reqs := []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpExists, MinValues: &two},
		{Key: apiv1.LabelZone, Operator: apiv1.OpExists, MinValues: &zero},
		{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"spot"}},
	}
	mv := Of(reqs)
	if len(mv) != 1 || Keys(mv) != apiv1.LabelInstanceFamily+">=2" {
		t.Fatalf("Of = %v, Keys = %q", mv, Keys(mv))
	}
}
