// Package deploy holds what is installed into a cluster to run Joinery:
// the CustomResourceDefinitions for karpenter.sh/v1 NodePool and NodeClaim and
// karpenter.k8s.aws/v1 EC2NodeClass (crds/*.yaml), embedded so that Go code
// (the local world in sim/kube, tests, the operator CLI) installs exactly the
// files a user would `kubectl apply -f deploy/crds/`.
package deploy

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

//go:embed crds/*.yaml
var crdFS embed.FS

// CRDs returns the YAML documents in deploy/crds, one CustomResourceDefinition
// each, sorted by file name. The slices are fresh copies; callers may modify them.
func CRDs() [][]byte {
	names, err := fs.Glob(crdFS, "crds/*.yaml")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	sort.Strings(names)
	out := make([][]byte, 0, len(names))
	for _, n := range names {
		b, err := crdFS.ReadFile(path.Clean(n))
		if err != nil {
			panic(err) // embedded, cannot fail
		}
		out = append(out, b)
	}
	return out
}
