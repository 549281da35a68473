package migrate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/joinery/joinery/deploy"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// crdSchema is what the API server checks a custom resource of one kind
// against, from the CRDs in deploy/crds: the OpenAPI schema (types,
// enums, patterns, bounds) and pruning (unknown fields). Defaulting and
// the CEL rules are not run (their libraries are not among the module's
// dependencies); NodePool.Validate, which Convert runs on every result,
// makes the CEL rules' checks (api/v1 validation_test and the
// crd_validation integration test hold the two to each other).
type crdSchema struct {
	structural *structuralschema.Structural
	openAPI    *spec.Schema
}

func crdSchemas(t *testing.T) map[string]*crdSchema {
	t.Helper()
	out := map[string]*crdSchema{}
	for _, doc := range deploy.CRDs() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			t.Fatal(err)
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
			t.Fatal(err)
		}
		s, err := structuralschema.NewStructural(internal)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatal(err)
		}
		o := &spec.Schema{}
		if err := json.Unmarshal(raw, o); err != nil {
			t.Fatal(err)
		}
		out[crd.Spec.Names.Kind] = &crdSchema{structural: s, openAPI: o}
	}
	return out
}

// admit runs what the API server runs on a create but defaulting and the
// CEL rules: strict field validation (unknown fields) and the schema.
func (c *crdSchema) admit(obj map[string]interface{}) field.ErrorList {
	obj = deepCopy(obj).(map[string]interface{})
	var errs field.ErrorList
	for _, p := range pruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Invalid(field.NewPath(p), "", "unknown field"))
	}
	if err := validate.AgainstSchema(c.openAPI, obj, strfmt.Default); err != nil {
		errs = append(errs, field.Invalid(nil, "", err.Error()))
	}
	return errs
}

// TestConvertedObjectsAreAcceptedByTheCRDs: every NodePool and
// EC2NodeClass the golden inputs convert to passes deploy/crds' schemas
// as the API server applies them; and a v1beta1 one
// is refused there (the CRDs serve v1 only, so the check bites).
func TestConvertedObjectsAreAcceptedByTheCRDs(t *testing.T) {
	schemas := crdSchemas(t)
	n := 0
	for _, files := range [][]string{
		{"testdata/guide.yaml"}, {"testdata/al2-ids.yaml"}, {"testdata/kubelet-split.yaml"}, {"testdata/kubectl-get-v1.yaml"},
		{"testdata/ubuntu-terms.yaml"}, {"testdata/v1-passthrough.yaml"},
		{"testdata/roundtrip/examples-v1beta1.yaml"}, {"testdata/roundtrip/kubelet-v1beta1.yaml"},
	} {
		r := Convert(read(t, files...))
		if len(r.Refusals) > 0 {
			t.Fatal(r.Refusals)
		}
		for _, o := range r.Objects {
			kind, _ := o["kind"].(string)
			s := schemas[kind]
			if s == nil {
				continue
			}
			n++
			if errs := s.admit(o); len(errs) > 0 {
				t.Errorf("%v: %s %v: %v", files, kind, get(o, "metadata", "name"), errs.ToAggregate())
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d objects checked", n)
	}
	// The checks bite: the v1beta1 input, and a converted pool with a
	// v1beta1 policy name.
	in := read(t, "testdata/guide.yaml")
	if errs := schemas["NodePool"].admit(in[0].Object); !strings.Contains(errs.ToAggregate().Error(), "spec.disruption.expireAfter") {
		t.Errorf("the v1beta1 NodePool is not refused for spec.disruption.expireAfter: %v", errs.ToAggregate())
	}
	r := Convert(in)
	ensure(r.Objects[0], "spec", "disruption")["consolidationPolicy"] = "WhenUnderutilized"
	if errs := schemas["NodePool"].admit(r.Objects[0]); !strings.Contains(errs.ToAggregate().Error(), "consolidationPolicy") {
		t.Errorf("consolidationPolicy WhenUnderutilized is not refused: %v", errs.ToAggregate())
	}
}
