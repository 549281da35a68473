package charttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rbacGolden is the chart's RBAC (ServiceAccount, ClusterRole, Role and
// their bindings) rendered with Helm's engine, checked in so that the
// integration test (test/integration/rbac_test.go) can run the worker with
// exactly the chart's permissions without Helm in Joinery's go.mod.
const rbacGolden = "../../rbac.yaml"

// rbacKinds are the rendered kinds that make up the worker's identity.
var rbacKinds = map[string]bool{
	"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
}

const goldenHeader = `# Generated from deploy/chart/joinery (release "joinery" in joinery-system,
# default values; RBAC does not depend on the required clusterName and
# aws.region) by deploy/chart/test: DO NOT EDIT. Regenerate with
#   cd deploy/chart/test && JOINERY_UPDATE_GOLDEN=1 go test -run TestRBACGoldenFile ./...
# test/integration/rbac_test.go applies it and runs the worker as this
# ServiceAccount, with nothing more than these roles.
`

func renderRBAC(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(goldenHeader)
	n := 0
	for _, o := range mustRender(t, minimal) {
		if !rbacKinds[o.kind] {
			continue
		}
		b.WriteString("---\n# Source: " + o.file + "\n")
		b.Write(bytes.TrimSpace(o.raw))
		b.WriteString("\n")
		n++
	}
	if n != len(rbacKinds) {
		t.Fatalf("rendered %d RBAC objects, want one of each of %d kinds", n, len(rbacKinds))
	}
	return b.Bytes()
}

// TestRBACGoldenFile: deploy/rbac.yaml is what the chart renders.
func TestRBACGoldenFile(t *testing.T) {
	want := renderRBAC(t)
	if os.Getenv("JOINERY_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(rbacGolden, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", filepath.Clean(rbacGolden))
		return
	}
	got, err := os.ReadFile(rbacGolden)
	if err != nil {
		t.Fatalf("%v (regenerate: cd deploy/chart/test && JOINERY_UPDATE_GOLDEN=1 go test -run TestRBACGoldenFile ./...)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("deploy/rbac.yaml differs from the chart's rendering at line %d:\n  file:  %q\n  chart: %q\nregenerate: cd deploy/chart/test && JOINERY_UPDATE_GOLDEN=1 go test -run TestRBACGoldenFile ./...", i+1, g, w)
			}
		}
	}
}
