package deploy

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func parseCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, doc := range CRDs() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			t.Fatal(err)
		}
		out[crd.Spec.Names.Kind] = crd
	}
	return out
}

func TestCRDs(t *testing.T) {
	want := map[string]string{
		"nodepools.karpenter.sh":           "NodePool",
		"nodeclaims.karpenter.sh":          "NodeClaim",
		"ec2nodeclasses.karpenter.k8s.aws": "EC2NodeClass",
		"nodeoverlays.karpenter.sh":        "NodeOverlay",
		// Upstream's (kubernetes/autoscaler), namespaced.
		"provisioningrequests.autoscaling.x-k8s.io": "ProvisioningRequest",
		// SIG Autoscaling's, namespaced, served as v1alpha1 and v1beta1.
		"capacitybuffers.autoscaling.x-k8s.io": "CapacityBuffer",
	}
	crds := parseCRDs(t)
	if len(crds) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(crds), len(want))
	}
	for _, crd := range crds {
		if want[crd.Name] != crd.Spec.Names.Kind {
			t.Errorf("unexpected CRD %s (kind %s)", crd.Name, crd.Spec.Names.Kind)
		}
		if crd.Spec.Names.Kind == "CapacityBuffer" {
			checkCapacityBufferCRD(t, crd)
			continue
		}
		wantScope := apiextensionsv1.ClusterScoped
		if crd.Spec.Names.Kind == "ProvisioningRequest" {
			wantScope = apiextensionsv1.NamespaceScoped
		}
		if crd.Spec.Scope != wantScope || len(crd.Spec.Names.ShortNames) == 0 {
			t.Errorf("%s: scope %s, shortNames %v", crd.Name, crd.Spec.Scope, crd.Spec.Names.ShortNames)
		}
		if len(crd.Spec.Versions) != 1 {
			t.Fatalf("%s: %d versions", crd.Name, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if wantVersion := map[string]string{"NodeOverlay": "v1alpha1"}[crd.Spec.Names.Kind]; v.Name != cmp.Or(wantVersion, "v1") || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil || len(v.AdditionalPrinterColumns) == 0 {
			t.Errorf("%s: version %+v", crd.Name, v)
		}
		for _, f := range []string{"spec", "status"} {
			if _, ok := v.Schema.OpenAPIV3Schema.Properties[f]; !ok {
				t.Errorf("%s: no %s in the schema", crd.Name, f)
			}
		}
	}
}

// checkCapacityBufferCRD: namespaced, v1alpha1 and v1beta1 served with the
// same schema and columns, v1beta1 stored (conversion None: the API server
// only rewrites apiVersion).
func checkCapacityBufferCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped || len(crd.Spec.Versions) != 2 {
		t.Fatalf("%s: scope %s, %d versions", crd.Name, crd.Spec.Scope, len(crd.Spec.Versions))
	}
	a, b := crd.Spec.Versions[0], crd.Spec.Versions[1]
	if a.Name != "v1alpha1" || b.Name != "v1beta1" || !a.Served || !b.Served || a.Storage || !b.Storage || b.Subresources == nil || b.Subresources.Status == nil {
		t.Errorf("%s: versions %s/%s served %v/%v storage %v/%v", crd.Name, a.Name, b.Name, a.Served, b.Served, a.Storage, b.Storage)
	}
	if !reflect.DeepEqual(a.Schema, b.Schema) || !reflect.DeepEqual(a.AdditionalPrinterColumns, b.AdditionalPrinterColumns) {
		t.Errorf("%s: v1alpha1 and v1beta1 differ", crd.Name)
	}
}

// TestCRDSchemasAreStructural checks every schema is structural (what the API
// server demands of a v1 CRD: types everywhere, no type in logical junctors),
// and that NodePool and NodeClaim specs are closed (unknown fields refused,
// not silently kept) while their printer columns point at real fields.
func TestCRDSchemasAreStructural(t *testing.T) {
	for kind, crd := range parseCRDs(t) {
		v := crd.Spec.Versions[0]
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		s, err := structuralschema.NewStructural(internal)
		if err != nil {
			t.Fatalf("%s: not structural: %v", kind, err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
			t.Errorf("%s: not structural: %v", kind, errs.ToAggregate())
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		if kind != "EC2NodeClass" && spec.XPreserveUnknownFields != nil && *spec.XPreserveUnknownFields {
			t.Errorf("%s: spec preserves unknown fields", kind)
		}
		if len(spec.Properties) == 0 {
			t.Errorf("%s: spec has no typed fields", kind)
		}
		for _, col := range v.AdditionalPrinterColumns {
			if !schemaHasPath(v.Schema.OpenAPIV3Schema, col.JSONPath) {
				t.Errorf("%s: printer column %s (%s) names no field of the schema", kind, col.Name, col.JSONPath)
			}
		}
	}
}

// schemaHasPath follows a printer column's simple JSONPath (.a.b, .a.b[?...].c,
// .metadata... is always fine) through the schema.
func schemaHasPath(s *apiextensionsv1.JSONSchemaProps, path string) bool {
	if strings.HasPrefix(path, ".metadata.") {
		return true
	}
	cur := *s
	for _, part := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		if i := strings.Index(part, "["); i >= 0 {
			part = part[:i]
		}
		if part == "" || strings.HasPrefix(part, "type==") || strings.HasPrefix(part, "(@") {
			continue
		}
		if cur.Type == "array" && cur.Items != nil && cur.Items.Schema != nil {
			cur = *cur.Items.Schema
		}
		if cur.XPreserveUnknownFields != nil && *cur.XPreserveUnknownFields {
			return true
		}
		if cur.AdditionalProperties != nil && cur.AdditionalProperties.Schema != nil {
			cur = *cur.AdditionalProperties.Schema
			continue
		}
		next, ok := cur.Properties[part]
		if !ok {
			return false
		}
		cur = next
	}
	return true
}

// TestCRDPatternsMatchAPIValidation checks the CRD carries the very patterns
// api/v1's Validate applies, so both accept the same values.
func TestCRDPatternsMatchAPIValidation(t *testing.T) {
	np := parseCRDs(t)["NodePool"].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	disruption := np.Properties["disruption"]
	budget := disruption.Properties["budgets"].Items.Schema
	tpl := np.Properties["template"].Properties["spec"]
	for _, c := range []struct {
		name, got, want string
	}{
		{"budgets[].nodes", budget.Properties["nodes"].Pattern, apiv1.BudgetNodesPattern},
		{"budgets[].schedule", budget.Properties["schedule"].Pattern, apiv1.BudgetSchedulePattern},
		{"consolidateAfter", disruption.Properties["consolidateAfter"].Pattern, "^((" + strings.TrimSuffix(strings.TrimPrefix(apiv1.DurationPattern, "^("), ")+$") + ")+|Never)$"},
		{"expireAfter", tpl.Properties["expireAfter"].Pattern, "^((" + strings.TrimSuffix(strings.TrimPrefix(apiv1.DurationPattern, "^("), ")+$") + ")+|Never)$"},
	} {
		if c.got != c.want {
			t.Errorf("%s: CRD pattern %q, api/v1 %q", c.name, c.got, c.want)
		}
		if _, err := regexp.Compile(c.got); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	cr := parseCRDs(t)["EC2NodeClass"].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["capacityReservationSelectorTerms"]
	if got := cr.Items.Schema.Properties["id"].Pattern; got != apiv1.CapacityReservationIDPattern {
		t.Errorf("capacityReservationSelectorTerms[].id: CRD pattern %q, api/v1 %q", got, apiv1.CapacityReservationIDPattern)
	}
	if got := cr.Items.Schema.Properties["ownerID"].Pattern; got != apiv1.AccountIDPattern {
		t.Errorf("capacityReservationSelectorTerms[].ownerID: CRD pattern %q, api/v1 %q", got, apiv1.AccountIDPattern)
	}
	if cr.MaxItems == nil || *cr.MaxItems != apiv1.MaxSelectorTerms || cr.Items.Schema.Properties["tags"].MaxProperties == nil ||
		*cr.Items.Schema.Properties["tags"].MaxProperties != apiv1.MaxSelectorTags {
		t.Errorf("capacityReservationSelectorTerms maxItems %v, tags maxProperties %v, want %d, %d", cr.MaxItems,
			cr.Items.Schema.Properties["tags"].MaxProperties, apiv1.MaxSelectorTerms, apiv1.MaxSelectorTags)
	}
	reqRules := tpl.Properties["requirements"].Items.Schema.XValidations
	found := false
	for _, r := range reqRules {
		if strings.Contains(r.Rule, "'"+apiv1.IntegerValuePattern+"'") {
			found = true
		}
	}
	if !found {
		t.Errorf("no requirement rule uses api/v1.IntegerValuePattern %q", apiv1.IntegerValuePattern)
	}
	if got := tpl.Properties["requirements"].MaxItems; got == nil || *got != apiv1.MaxRequirements {
		t.Errorf("requirements maxItems %v, want %d", got, apiv1.MaxRequirements)
	}
	for name, p := range map[string]apiextensionsv1.JSONSchemaProps{"consolidateAfter": disruption.Properties["consolidateAfter"], "expireAfter": tpl.Properties["expireAfter"]} {
		if p.MaxLength == nil || *p.MaxLength != apiv1.MaxDurationLength {
			t.Errorf("%s maxLength %v, want %d", name, p.MaxLength, apiv1.MaxDurationLength)
		}
	}
	for _, f := range []string{"taints", "startupTaints"} {
		if got := tpl.Properties[f].MaxItems; got == nil || *got != apiv1.MaxTaints {
			t.Errorf("%s maxItems %v, want %d", f, got, apiv1.MaxTaints)
		}
	}
	labels := np.Properties["template"].Properties["metadata"].Properties["labels"]
	if got := labels.MaxProperties; got == nil || *got != apiv1.MaxLabels {
		t.Errorf("labels maxProperties %v, want %d", got, apiv1.MaxLabels)
	}
	if got := labels.AdditionalProperties.Schema.MaxLength; got == nil || *got != apiv1.MaxLabelValueLength {
		t.Errorf("label values maxLength %v, want %d", got, apiv1.MaxLabelValueLength)
	}
	if got := tpl.Properties["nodeClassRef"].Properties["name"].MaxLength; got == nil || *got != apiv1.MaxNameLength {
		t.Errorf("nodeClassRef.name maxLength %v, want %d", got, apiv1.MaxNameLength)
	}
	if got := disruption.Properties["budgets"].MaxItems; got == nil || *got != apiv1.MaxBudgets {
		t.Errorf("budgets maxItems %v, want %d", got, apiv1.MaxBudgets)
	}
}

// TestChartCRDsAreDeployCRDs: the Helm chart ships the same files.
func TestChartCRDsAreDeployCRDs(t *testing.T) {
	files, err := filepath.Glob("crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("crds: %v %v", files, err)
	}
	for _, f := range files {
		a, err1 := os.ReadFile(f)
		b, err2 := os.ReadFile(filepath.Join("chart", "joinery", "crds", filepath.Base(f)))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("chart/joinery/crds/%s differs from crds/ (cp deploy/crds/*.yaml deploy/chart/joinery/crds/): %v %v", filepath.Base(f), err1, err2)
		}
	}
}

// TestPrinterColumnsAreKarpenters checks each CRD's printer columns equal
// Karpenter v1's (sigs.k8s.io/karpenter pkg/apis/crds, the AWS provider's
// for EC2NodeClass; NodeOverlay's from pkg/apis/v1alpha1): same names, JSONPaths, types and priorities, in order.
func TestPrinterColumnsAreKarpenters(t *testing.T) {
	type col struct {
		name, path, typ string
		priority        int32
	}
	want := map[string][]col{
		"NodePool": {
			{"NodeClass", ".spec.template.spec.nodeClassRef.name", "string", 0},
			{"Nodes", ".status.nodes", "string", 0},
			{"Ready", `.status.conditions[?(@.type=="Ready")].status`, "string", 0},
			{"Age", ".metadata.creationTimestamp", "date", 0},
			{"Weight", ".spec.weight", "integer", 1},
			{"CPU", ".status.resources.cpu", "string", 1},
			{"Memory", ".status.resources.memory", "string", 1},
		},
		"NodeClaim": {
			{"Type", `.metadata.labels.node\.kubernetes\.io/instance-type`, "string", 0},
			{"Capacity", `.metadata.labels.karpenter\.sh/capacity-type`, "string", 0},
			{"Zone", `.metadata.labels.topology\.kubernetes\.io/zone`, "string", 0},
			{"Node", ".status.nodeName", "string", 0},
			{"Ready", `.status.conditions[?(@.type=="Ready")].status`, "string", 0},
			{"Age", ".metadata.creationTimestamp", "date", 0},
			{"ImageID", ".status.imageID", "string", 1},
			{"ID", ".status.providerID", "string", 1},
			{"NodePool", `.metadata.labels.karpenter\.sh/nodepool`, "string", 1},
			{"NodeClass", ".spec.nodeClassRef.name", "string", 1},
			{"Drifted", `.status.conditions[?(@.type=="Drifted")].status`, "string", 1},
		},
		"EC2NodeClass": {
			{"Ready", `.status.conditions[?(@.type=="Ready")].status`, "string", 0},
			{"Age", ".metadata.creationTimestamp", "date", 0},
			{"Role", ".spec.role", "string", 1},
		},
		"NodeOverlay": {
			{"Ready", `.status.conditions[?(@.type=="Ready")].status`, "string", 0},
			{"Age", ".metadata.creationTimestamp", "date", 0},
			{"Weight", ".spec.weight", "integer", 1},
		},
		// Upstream's only column.
		"ProvisioningRequest": {
			{"Age", ".metadata.creationTimestamp", "date", 0},
		},
		// pkg/apis/autoscaling/v1beta1's.
		"CapacityBuffer": {
			{"Strategy", ".spec.provisioningStrategy", "string", 0},
			{"PodTemplate", ".status.podTemplateRef.name", "string", 0},
			{"Replicas", ".status.replicas", "integer", 0},
			{"ConditionsType", ".status.conditions[*].type", "string", 0},
			{"ConditionsStatus", ".status.conditions[*].status", "string", 0},
			{"ConditionsReason", ".status.conditions[*].reason", "string", 0},
			{"Age", ".metadata.creationTimestamp", "date", 0},
		},
	}
	for kind, crd := range parseCRDs(t) {
		var got []col
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			got = append(got, col{c.Name, c.JSONPath, c.Type, c.Priority})
		}
		if !reflect.DeepEqual(got, want[kind]) {
			t.Errorf("%s printer columns:\n got %v\nwant %v", kind, got, want[kind])
		}
	}
}
