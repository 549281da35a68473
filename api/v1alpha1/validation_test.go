package v1alpha1

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Every overlay of testdata/invalid-nodeoverlays.yaml is refused at the
// field it names (the API server refuses the same, test/integration).
func TestValidateRefusesTheInvalidOverlays(t *testing.T) {
	f, err := os.Open("testdata/invalid-nodeoverlays.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	n := 0
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			break
		}
		o := &NodeOverlay{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, o); err != nil {
			t.Fatal(err)
		}
		n++
		want := o.Annotations["test.joinery.sh/field"]
		errs := o.Validate()
		if len(errs) == 0 {
			t.Errorf("%s accepted, want it refused at %s", o.Name, want)
			continue
		}
		if got := errs[0].Field; got != want && !strings.HasPrefix(got, want+".") && !strings.HasPrefix(got, want+"[") {
			t.Errorf("%s refused at %s (%v), want %s", o.Name, got, errs, want)
		}
	}
	if n < 9 {
		t.Fatalf("read %d overlays", n)
	}
}

func TestValidAccepted(t *testing.T) {
	w := int32(10)
	adj, price := "-30%", "0.5"
	for _, o := range []NodeOverlay{
		{Spec: NodeOverlaySpec{Requirements: []NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-family", Operator: "In", Values: []string{"m5"}}}, PriceAdjustment: &adj, Weight: &w}},
		{Spec: NodeOverlaySpec{Requirements: []NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Gte", Values: []string{"8"}}}, Price: &price}},
	} {
		if errs := o.Validate(); len(errs) > 0 {
			t.Errorf("%+v refused: %v", o.Spec, errs)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		op, bound, value string
		has, want        bool
	}{
		{"Gte", "8", "8", true, true}, {"Gte", "8", "7", true, false}, {"Lte", "8", "8", true, true}, {"Lte", "8", "9", true, false},
		{"Gt", "8", "8", true, false}, {"Lt", "8", "7", true, true}, {"Gte", "8", "", false, false},
		{"In", "8", "8", true, true}, {"NotIn", "8", "", false, true}, {"DoesNotExist", "", "", false, true},
	} {
		r := NodeSelectorRequirement{Key: "k", Operator: c.op}
		if c.bound != "" {
			r.Values = []string{c.bound}
		}
		if got := r.Matches(c.value, c.has); got != c.want {
			t.Errorf("%s %s on %q (set %v) = %v", c.op, c.bound, c.value, c.has, got)
		}
	}
}
