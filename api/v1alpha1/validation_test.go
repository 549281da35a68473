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
