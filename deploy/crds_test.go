package deploy

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestCRDs(t *testing.T) {
	want := map[string]string{
		"nodepools.karpenter.sh":           "NodePool",
		"nodeclaims.karpenter.sh":          "NodeClaim",
		"ec2nodeclasses.karpenter.k8s.aws": "EC2NodeClass",
	}
	docs := CRDs()
	if len(docs) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(docs), len(want))
	}
	for _, doc := range docs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			t.Fatal(err)
		}
		if want[crd.Name] != crd.Spec.Names.Kind {
			t.Errorf("unexpected CRD %s (kind %s)", crd.Name, crd.Spec.Names.Kind)
		}
		if crd.Spec.Scope != apiextensionsv1.ClusterScoped || len(crd.Spec.Names.ShortNames) == 0 {
			t.Errorf("%s: scope %s, shortNames %v", crd.Name, crd.Spec.Scope, crd.Spec.Names.ShortNames)
		}
		if len(crd.Spec.Versions) != 1 {
			t.Fatalf("%s: %d versions", crd.Name, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if v.Name != "v1" || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil || len(v.AdditionalPrinterColumns) == 0 {
			t.Errorf("%s: version %+v", crd.Name, v)
		}
		for _, f := range []string{"spec", "status"} {
			p := v.Schema.OpenAPIV3Schema.Properties[f]
			if p.XPreserveUnknownFields == nil || !*p.XPreserveUnknownFields {
				t.Errorf("%s: %s does not preserve unknown fields", crd.Name, f)
			}
		}
	}
}
