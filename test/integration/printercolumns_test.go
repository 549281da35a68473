//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/deploy"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// checkPrinterColumns evaluates every printer column of the three CRDs
// (what `kubectl get nodepools,nodeclaims,ec2nodeclasses -o wide` shows)
// on every object of the settled cluster and wants each filled; only
// NodeClaim's Drifted is empty on a node that has not drifted, and
// NodePool's Weight on a pool that sets none, as with Karpenter. NodePool's NODES, CPU and MEMORY come from the leader's
// status writes (every 5 s), so they are waited for.
func checkPrinterColumns(t *testing.T, e *env, nodes int) {
	t.Helper()
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		problems = nil
		seen := map[string]int{}
		for _, b := range deploy.CRDs() {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(b, &crd); err != nil {
				t.Fatal(err)
			}
			kind, v := crd.Spec.Names.Kind, crd.Spec.Versions[0]
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			list, err := dc.Resource(gvr).List(e.ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			seen[kind] = len(list.Items)
			for _, o := range list.Items {
				for _, col := range v.AdditionalPrinterColumns {
					if kind == "NodeClaim" && col.Name == "Drifted" {
						continue
					}
					if _, set, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "weight"); kind == "NodePool" && col.Name == "Weight" && !set {
						continue // no weight written, none shown (Karpenter defaults none either)
					}
					jp := jsonpath.New(col.Name).AllowMissingKeys(true)
					if err := jp.Parse("{" + col.JSONPath + "}"); err != nil {
						t.Fatalf("%s column %s: %v", kind, col.Name, err)
					}
					var out strings.Builder
					if err := jp.Execute(&out, o.Object); err != nil || strings.TrimSpace(out.String()) == "" {
						problems = append(problems, fmt.Sprintf("%s %s: column %s (%s) empty", kind, o.GetName(), col.Name, col.JSONPath))
					}
				}
				if kind == "NodePool" {
					if n, _, _ := unstructured.NestedInt64(o.Object, "status", "nodes"); n == 0 && o.GetName() == "general-purpose" {
						problems = append(problems, "NodePool general-purpose: status.nodes 0")
					}
				}
			}
		}
		// One NodeClaim per Joinery node there is now (the count the slice
		// listed may have moved since: a late claim registering, a
		// consolidation; nodes is logged with it).
		if now := joineryNodes(t, e); seen["NodeClaim"] != now || seen["NodePool"] == 0 || seen["EC2NodeClass"] == 0 {
			problems = append(problems, fmt.Sprintf("objects %v, want %d NodeClaims (the Joinery nodes now; %d when the slice was listed)", seen, now, nodes))
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}
