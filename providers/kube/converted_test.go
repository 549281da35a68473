package kube

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// An object is converted once per resourceVersion; a new version is
// converted again, and a deleted object's entry goes.
func TestConvertedOncePerVersion(t *testing.T) {
	claim := func(rv, node string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": map[string]interface{}{"name": "general-x1", "uid": "uid-1", "resourceVersion": rv},
			"status":   map[string]interface{}{"nodeName": node}}}
		return u
	}
	var c converted[apiv1.NodeClaim]
	a, err := c.get(claim("1", ""))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.get(claim("1", ""))
	if again != a {
		t.Fatal("same resourceVersion converted again")
	}
	b, _ := c.get(claim("2", "ip-10-0-0-7"))
	if b == a || b.Status.NodeName != "ip-10-0-0-7" || a.Status.NodeName != "" {
		t.Fatalf("new version: %q (old %q), want a new object with the new status", b.Status.NodeName, a.Status.NodeName)
	}
	c.drop(cache.DeletedFinalStateUnknown{Key: "general-x1", Obj: claim("2", "ip-10-0-0-7")})
	if len(c.byUID) != 0 {
		t.Fatalf("%d entries after the delete, want 0", len(c.byUID))
	}
	if _, err := c.get("not unstructured"); err == nil {
		t.Fatal("a non-unstructured object converted")
	}
}

// finish runs once per version and its verdict comes back with the
// object on every read of that version (a NodePool's defaults and
// validation are not redone on each NodePools call).
func TestConvertedKeepsFinishVerdict(t *testing.T) {
	pool := func(rv, operator string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]interface{}{"name": "general", "uid": "uid-p", "resourceVersion": rv},
			"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
				"nodeClassRef": map[string]interface{}{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []interface{}{map[string]interface{}{"key": "kubernetes.io/arch", "operator": operator, "values": []interface{}{"amd64"}}},
			}}}}}
	}
	finished := 0
	c := converted[apiv1.NodePool]{finish: func(np *apiv1.NodePool) error { finished++; return finishNodePool(np) }}
	for range 3 {
		np, err := c.get(pool("1", "Roughly"))
		if np == nil || err == nil {
			t.Fatalf("invalid pool: %v, %v; want the object and its validation error", np, err)
		}
	}
	np, err := c.get(pool("2", "In"))
	if err != nil || np.Spec.Template.Spec.ExpireAfter == "" {
		t.Fatalf("valid pool: %v, expireAfter %q; want no error and the defaults", err, np.Spec.Template.Spec.ExpireAfter)
	}
	if finished != 2 {
		t.Fatalf("finish ran %d times over two versions, want 2", finished)
	}
}
