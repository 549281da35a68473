package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

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
