package v1

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func validPool() *NodePool {
	w := int32(10)
	return &NodePool{Spec: NodePoolSpec{
		Template: NodeClaimTemplate{Spec: NodeClaimTemplateSpec{
			NodeClassRef: &NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []NodeSelectorRequirementWithMinValues{{Key: LabelInstanceGen, Operator: OpGt, Values: []string{"5"}}},
		}},
		Weight: &w,
	}}
}

func TestValidateReportsFieldAndReason(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*NodePool)
		want   string // substring of the error: field path and reason
	}{
		{"unknown operator", func(np *NodePool) { np.Spec.Template.Spec.Requirements[0].Operator = "Near" },
			`spec.template.spec.requirements[0].operator: Unsupported value: "Near"`},
		{"Gt non-integer", func(np *NodePool) { np.Spec.Template.Spec.Requirements[0].Values = []string{"five"} },
			`spec.template.spec.requirements[0].values[0]: Invalid value: "five": operator Gt needs an integer`},
		{"Gte non-integer", func(np *NodePool) {
			np.Spec.Template.Spec.Requirements[0] = NodeSelectorRequirementWithMinValues{Key: LabelInstanceCPU, Operator: OpGte, Values: []string{"two"}}
		}, `spec.template.spec.requirements[0].values[0]: Invalid value: "two": operator Gte needs an integer`},
		{"Lte two values", func(np *NodePool) {
			np.Spec.Template.Spec.Requirements[0] = NodeSelectorRequirementWithMinValues{Key: LabelInstanceCPU, Operator: OpLte, Values: []string{"4", "8"}}
		}, `spec.template.spec.requirements[0].values: Invalid value: ["4","8"]: operator Lte takes exactly one integer value`},
		{"missing nodeClassRef", func(np *NodePool) { np.Spec.Template.Spec.NodeClassRef = nil },
			`spec.template.spec.nodeClassRef: Required value`},
		{"In without values", func(np *NodePool) {
			np.Spec.Template.Spec.Requirements[0] = NodeSelectorRequirementWithMinValues{Key: LabelArch, Operator: OpIn}
		}, `spec.template.spec.requirements[0].values: Required value`},
		{"weight out of range", func(np *NodePool) { w := int32(101); np.Spec.Weight = &w }, `spec.weight: Invalid value: 101`},
		{"bad budget", func(np *NodePool) { np.Spec.Disruption.Budgets = []Budget{{Nodes: "ten"}} }, `spec.disruption.budgets[0].nodes`},
		{"bad policy", func(np *NodePool) { np.Spec.Disruption.ConsolidationPolicy = "Sometimes" }, `spec.disruption.consolidationPolicy: Unsupported value`},
		{"restricted label", func(np *NodePool) {
			np.Spec.Template.ObjectMeta.Labels = map[string]string{LabelNodePool: "x"}
		}, `spec.template.metadata.labels[karpenter.sh/nodepool]: Forbidden`},
		{"minValues above values", func(np *NodePool) {
			mv := 3
			np.Spec.Template.Spec.Requirements[0] = NodeSelectorRequirementWithMinValues{Key: LabelArch, Operator: OpIn, Values: []string{"amd64"}, MinValues: &mv}
		}, `minValues: Invalid value: 3`},
	}
	if errs := validPool().Validate(); len(errs) != 0 {
		t.Fatalf("valid pool rejected: %v", errs)
	}
	for _, c := range cases {
		np := validPool()
		c.mutate(np)
		errs := np.Validate()
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.want) {
			t.Errorf("%s: got %v, want it to contain %q", c.name, errs, c.want)
		}
	}
}

func TestExampleNodePoolsAreValid(t *testing.T) {
	data, err := os.ReadFile("../../examples/nodepools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---") {
		if !strings.Contains(doc, "kind: NodePool") {
			continue
		}
		np := &NodePool{}
		if err := yaml.UnmarshalStrict([]byte(doc), np); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if errs := np.Validate(); len(errs) != 0 {
			t.Errorf("%s: %v", np.Name, errs)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("decoded %d NodePools, want 4", n)
	}
}

func TestRequirementMatches(t *testing.T) {
	r := func(op string, vals ...string) NodeSelectorRequirementWithMinValues {
		return NodeSelectorRequirementWithMinValues{Key: "k", Operator: op, Values: vals}
	}
	cases := []struct {
		req   NodeSelectorRequirementWithMinValues
		value string
		has   bool
		want  bool
	}{
		{r(OpIn, "a", "b"), "b", true, true},
		{r(OpIn, "a"), "", false, false},
		{r(OpNotIn, "a"), "", false, true},
		{r(OpNotIn, "a"), "a", true, false},
		{r(OpExists), "x", true, true},
		{r(OpDoesNotExist), "", false, true},
		{r(OpGt, "5"), "6", true, true},
		{r(OpGt, "5"), "5", true, false},
		{r(OpLt, "5"), "4", true, true},
		{r(OpGt, "5"), "six", true, false},
		{r(OpGt, "5"), "", false, false},
		{r(OpGte, "5"), "5", true, true},
		{r(OpGte, "5"), "4", true, false},
		{r(OpLte, "5"), "5", true, true},
		{r(OpLte, "5"), "6", true, false},
		{r(OpLte, "5"), "-3", true, true},
		{r(OpGte, "5"), "", false, false},
		{r(OpLte, "5"), "five", true, false},
	}
	for _, c := range cases {
		if got := c.req.Matches(c.value, c.has); got != c.want {
			t.Errorf("%s %v on (%q, %v) = %v, want %v", c.req.Operator, c.req.Values, c.value, c.has, got, c.want)
		}
	}
}

// readObjects reads a multi-document YAML file into unstructured objects, as
// the controller's informers would hold them.
func readObjects(t *testing.T, path string) []map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]interface{}
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
	return out
}

// poolErrors decodes an object the way the controller does (cluster.NodePools:
// a decode error makes the pool invalid too) and validates it.
func poolErrors(obj map[string]interface{}) string {
	np := &NodePool{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, np); err != nil {
		return "cannot decode: " + err.Error()
	}
	if errs := np.Validate(); len(errs) > 0 {
		return errs.ToAggregate().Error()
	}
	return ""
}

// TestValidateAgreesWithTheCRD runs the bad-object table the integration test
// applies to the real API server (testdata/invalid-nodepools.yaml): Validate
// must refuse every one, naming the same field the API server names; and it
// must accept testdata/valid.yaml, which the API server accepts.
func TestValidateAgreesWithTheCRD(t *testing.T) {
	bad := readObjects(t, "testdata/invalid-nodepools.yaml")
	if len(bad) < 40 {
		t.Fatalf("%d invalid NodePools", len(bad))
	}
	for _, obj := range bad {
		u := unstructured.Unstructured{Object: obj}
		field := u.GetAnnotations()["test.joinery.sh/field"]
		if field == "" {
			t.Fatalf("%s: no test.joinery.sh/field annotation", u.GetName())
		}
		got := poolErrors(obj)
		if got == "" {
			t.Errorf("%s: Validate accepted it (the CRD refuses it at %s)", u.GetName(), field)
		} else if !strings.Contains(got, field) && !strings.HasPrefix(got, "cannot decode: ") {
			// A value the Go types cannot hold (a duration or quantity that
			// does not parse) is refused when decoding, without a field path.
			t.Errorf("%s: Validate said %q, want the field %s", u.GetName(), got, field)
		}
	}
	n := 0
	for _, obj := range readObjects(t, "testdata/valid.yaml") {
		if obj["kind"] != "NodePool" {
			continue
		}
		n++
		if got := poolErrors(obj); got != "" {
			t.Errorf("%v: %s", obj["metadata"], got)
		}
	}
	if n == 0 {
		t.Fatal("no valid NodePools")
	}
}

// The capacity reservation rows of testdata/invalid-others.yaml, which the
// API server refuses, are refused by ValidateCapacityReservationTerms too,
// naming the same field (and message, when the row names one).
func TestCapacityReservationTermsAgreeWithTheCRD(t *testing.T) {
	n := 0
	for _, obj := range readObjects(t, "testdata/invalid-others.yaml") {
		u := unstructured.Unstructured{Object: obj}
		field := u.GetAnnotations()["test.joinery.sh/field"]
		if u.GetKind() != "EC2NodeClass" || !strings.HasPrefix(field, "spec.capacityReservationSelectorTerms") {
			continue
		}
		n++
		var cls EC2NodeClass
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &cls); err != nil {
			t.Fatalf("%s: %v", u.GetName(), err)
		}
		errs := ValidateCapacityReservationTerms(cls.Spec.CapacityReservationSelectorTerms, nil)
		got := errs.ToAggregate()
		if got == nil {
			t.Errorf("%s: accepted (the CRD refuses it at %s)", u.GetName(), field)
			continue
		}
		if !strings.Contains(got.Error(), field) || !strings.Contains(got.Error(), u.GetAnnotations()["test.joinery.sh/message"]) {
			t.Errorf("%s: %q, want the field %s and %q", u.GetName(), got, field, u.GetAnnotations()["test.joinery.sh/message"])
		}
	}
	if n < 6 {
		t.Fatalf("%d capacity reservation rows", n)
	}
}
