package planner

import (
	"math"
	"testing"
)

// A Node of a static pool counts toward its replicas (one of two is
// planned, spread to the other zone), and a Node of a pool with a USD/hour
// limit counts against it (0.2 less an m5.large's 0.096 holds one more).
func TestExistingNodesCountForStaticAndUSDLimits(t *testing.T) {
	docs, errs := Parse("p.yaml", []byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 2
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: capped
  annotations: {joinery.sh/limit-usd-per-hour: "0.2"}
spec:
  template:
    metadata: {labels: {team: capped}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: capped, effect: NoSchedule}]
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: v1
kind: Node
metadata:
  name: f1
  labels: {karpenter.sh/nodepool: fixed, topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large, karpenter.sh/capacity-type: on-demand}
spec: {taints: [{key: full, effect: NoSchedule}]}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "29"}, capacity: {cpu: "2", memory: 8Gi, pods: "29"}}
---
apiVersion: v1
kind: Node
metadata:
  name: c1
  labels: {karpenter.sh/nodepool: capped, topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large, karpenter.sh/capacity-type: on-demand}
spec: {taints: [{key: full, effect: NoSchedule}]}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "29"}, capacity: {cpu: "2", memory: 8Gi, pods: "29"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {team: capped}
      tolerations: [{key: capped, operator: Exists}]
      containers: [{name: c, resources: {requests: {cpu: 1200m}}}]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, errs := Build(docs, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(b.Static) != 1 || b.Static[0].Want != 2 || b.Static[0].Have != 1 || len(b.Static[0].Input.Pods) != 1 {
		t.Fatalf("static %+v", b.Static)
	}
	if p := b.Input.NodePools[0]; p.Name != "capped" || math.Abs(p.CostUsage-0.096) > 1e-9 {
		t.Fatalf("pool %s cost usage %v, want capped at 0.096", p.Name, p.CostUsage)
	}
	r := SolveAll(b)
	if len(r.Static) != 1 || r.Static[0].Node != "static/fixed-1" || staticZone(r.Static[0]) != "us-east-1b" {
		t.Errorf("static nodes %+v, want static/fixed-1 in us-east-1b", r.Static)
	}
	// The web pods avoid the static node (no team label) and get one
	// capped node; the other two are over the limit. Two m5.large on
	// demand: 0.192.
	if len(r.Plan.NewNodeClaims) != 1 || len(r.Plan.Unschedulable) != 2 || math.Abs(r.Price-0.192) > 1e-9 {
		t.Errorf("new %d, unschedulable %v, price %v; want 1, 2, 0.192", len(r.Plan.NewNodeClaims), r.Plan.Unschedulable, r.Price)
	}
}

func staticZone(sn StaticNode) string { return sn.asNode().Labels["topology.kubernetes.io/zone"] }
