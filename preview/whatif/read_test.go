package whatif

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "change.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// gpPoolYAML is NodePool gp asking for family c7i with the given
// requirement operator: In reads, an unknown one is refused.
func gpPoolYAML(operator string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gp}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: ` + operator + `, values: ["c7i"]}
`
}

// ReadChange keeps NodePools and EC2NodeClasses, notes other kinds, and
// refuses a bad object naming its field, and an older API version naming
// the command that converts it.
func TestReadChange(t *testing.T) {
	ok := writeFile(t, gpPoolYAML("In")+`---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
`)
	ch, notes, err := ReadChange(ok)
	if err != nil || len(ch.NodePools) != 1 || len(ch.NodeClasses) != 1 || ch.NodePools[0].Name != "gp" || ch.NodeClasses[0].Name != "default" {
		t.Fatalf("ReadChange: %+v %v", ch, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ConfigMap x ignored") {
		t.Errorf("notes %q", notes)
	}
	bad := writeFile(t, gpPoolYAML("Sometimes"))
	if _, _, err := ReadChange(bad); err == nil || !strings.Contains(err.Error(), "document 1 (NodePool gp): spec.template.spec.requirements[0].operator") {
		t.Errorf("bad operator: %v", err)
	}
	old := writeFile(t, `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: gp}
spec: {}
`)
	if _, _, err := ReadChange(old); err == nil || !strings.Contains(err.Error(), "starter migrate") {
		t.Errorf("v1beta1: %v", err)
	}
	none := writeFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	if _, _, err := ReadChange(none); err == nil || !strings.Contains(err.Error(), "no NodePool or EC2NodeClass") {
		t.Errorf("no NodePool: %v", err)
	}
}
