package main

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/solver"
)

// `starter plan -o json` writes camelCase keys everywhere, the
// existingPlacements and unschedulable entries included.
func TestPlanJSONIsCamelCase(t *testing.T) {
	docs, errs := planner.Parse("p.yaml", []byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	built, errs := planner.Build(docs, planner.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res := planner.Solve(built.Input)
	res.Plan.ExistingPlacements = []solver.Placement{{Pod: "default/a", Node: "ip-10-0-0-9.ec2.internal"}}
	res.Plan.Unschedulable = []solver.Unschedulable{{Pod: "default/b", Reason: "too big"}}
	var buf bytes.Buffer
	if err := writePlanJSON(&buf, res, []string{"savings-plan"}, 0.1); err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !camel.MatchString(k) {
					t.Errorf("%s.%s: key is not camelCase", path, k)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		}
	}
	walk("", doc)
	var got struct {
		ExistingPlacements []map[string]string `json:"existingPlacements"`
		Unschedulable      []map[string]string `json:"unschedulable"`
		NewNodeClaims      []map[string]any    `json:"newNodeClaims"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.ExistingPlacements[0]["pod"] != "default/a" || got.ExistingPlacements[0]["node"] != "ip-10-0-0-9.ec2.internal" ||
		got.Unschedulable[0]["pod"] != "default/b" || got.Unschedulable[0]["reason"] != "too big" || len(got.NewNodeClaims) != 1 {
		t.Errorf("plan JSON %s", buf.String())
	}
}

// A static NodePool's replicas are nodes of the plan: the types its static
// launches would get, their USD/hour in the total, and the pending pods
// that fit on them (the rest get new nodes).
func TestPlanListsStaticReplicas(t *testing.T) {
	docs, errs := planner.Parse("p.yaml", []byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 2
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large, m6i.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [c6i.large]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, resources: {requests: {cpu: 1200m, memory: 1Gi}}}]}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	built, errs := planner.Build(docs, planner.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res := planner.SolveAll(built)
	// Two m6i.large (0.096 each) whatever the pods; two of the 1.2-cpu
	// pods fit there, one per node; the third gets a c6i.large (0.085).
	if len(res.Static) != 2 || len(res.Plan.NewNodeClaims) != 1 || len(res.Plan.ExistingPlacements) != 2 {
		t.Fatalf("static %d, new %d, placed %d", len(res.Static), len(res.Plan.NewNodeClaims), len(res.Plan.ExistingPlacements))
	}
	var buf bytes.Buffer
	writePlanTable(&buf, built.Input, res)
	out := buf.String()
	for _, want := range []string{
		"New nodes: 3 for 3 pending pods (0 placed on existing nodes)\n",
		"Static NodePools: 2 of the nodes, launched whatever the pods, 0.1920 USD/hour (2 pending pods placed on them)\n",
		"fixed     m6i.large      on-demand      us-east-1a  1      1     0.0960\n",
		"fixed     m6i.large      on-demand      us-east-1b  1      1     0.0960\n",
		"general   c6i.large      on-demand",
		"Total: 0.2770 USD/hour\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := writePlanJSON(&buf, res, nil, listPrice(catalog.MustDefault(), res)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Static []struct {
			Node, NodePool, InstanceType string
			PriceUSDHour                 float64 `json:"priceUSDPerHour"`
			Pods                         []string
		} `json:"staticNodeClaims"`
		Price     float64 `json:"priceUSDPerHour"`
		StaticUSD float64 `json:"staticPriceUSDPerHour"`
		List      float64 `json:"listPriceUSDPerHour"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Static) != 2 || got.Static[0].Node != "static/fixed-0" || got.Static[0].InstanceType != "m6i.large" ||
		got.Static[0].PriceUSDHour != 0.096 || len(got.Static[0].Pods) != 1 || got.StaticUSD != 0.192 ||
		math.Abs(got.Price-0.277) > 1e-9 || math.Abs(got.List-0.277) > 1e-9 {
		t.Errorf("plan JSON %s", buf.String())
	}
}
