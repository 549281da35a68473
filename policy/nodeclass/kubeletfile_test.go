package nodeclass

import (
	"os"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"sigs.k8s.io/yaml"
)

// Each class of testdata/invalid-kubelet.yaml, which the API server takes
// since spec.kubelet is an open object, is refused here naming its field.
func TestInvalidKubeletClassesAreRefusedByField(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid-kubelet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var cls apiv1.EC2NodeClass
		if err := yaml.UnmarshalStrict([]byte(doc), &cls); err != nil {
			t.Fatalf("decoding: %v\n%s", err, doc)
		}
		n++
		field := cls.Annotations["test.joinery.sh/field"]
		problems := KubeletProblems(&cls.Spec)
		found := false
		for _, p := range problems {
			found = found || strings.HasPrefix(p.Field, field)
		}
		if !found {
			t.Errorf("%s: problems %+v, want one at %s", cls.Name, problems, field)
		}
	}
	if n != 5 {
		t.Fatalf("%d classes read, want 5", n)
	}
}
