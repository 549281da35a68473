package planner

import (
	"strings"
	"testing"
)

const overlayManifests = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: web}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c5, m5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
`

// A -30% NodeOverlay on m5 moves the plan from c5.large to m5.large, at
// the overlaid price; a conflicting one is named and left out.
func TestNodeOverlayMovesThePlan(t *testing.T) {
	plan := func(extra string) (*Built, Result) {
		t.Helper()
		docs, errs := Parse("m.yaml", []byte(overlayManifests+extra))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		b, errs := Build(docs, Options{})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return b, Solve(b.Input)
	}
	_, before := plan("")
	if got := before.Plan.NewNodeClaims[0].InstanceTypes[0].Type.Name; got != "c5.large" {
		t.Fatalf("without overlay: %s", got)
	}
	b, after := plan(`---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan}
spec:
  weight: 10
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-30%"
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: another-plan}
spec:
  weight: 10
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]
  priceAdjustment: "-50%"
`)
	nc := after.Plan.NewNodeClaims[0]
	if got := nc.InstanceTypes[0].Type.Name; got != "m5.large" || after.Price > 0.096*0.7+1e-9 {
		t.Fatalf("with -30%% on m5: %s at %v", got, after.Price)
	}
	if strings.Join(b.Overlays, ",") != "savings-plan" {
		t.Errorf("overlays applied %v", b.Overlays)
	}
	if w := strings.Join(b.Warnings, "\n"); !strings.Contains(w, "NodeOverlay another-plan not applied (Conflict)") || !strings.Contains(w, "savings-plan") {
		t.Errorf("warnings:\n%s", w)
	}
}

func TestInvalidNodeOverlayIsRefusedWithItsField(t *testing.T) {
	docs, errs := Parse("m.yaml", []byte(overlayManifests+`---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: bad}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "30%"
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	_, errs = Build(docs, Options{})
	if len(errs) != 1 || !strings.Contains(errs.Error(), "spec.priceAdjustment") || !strings.Contains(errs.Error(), "NodeOverlay bad") {
		t.Fatalf("errors %v", errs)
	}
}
