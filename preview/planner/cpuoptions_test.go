package planner

import "testing"

// `starter plan` honours spec.cpuOptions as the controller does: a class
// enabling nested virtualization gets nodes only of the types that support
// it (the embedded catalog's documented families), one disabling it any.
func TestPlanKeepsNestedVirtualizationTypes(t *testing.T) {
	for _, tc := range []struct {
		value  string
		nested bool
	}{{"enabled", true}, {"disabled", false}} {
		y := `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: vm}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  cpuOptions: {nestedVirtualization: ` + tc.value + `}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: vm}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: vm}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
apiVersion: v1
kind: Pod
metadata: {name: vm}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`
		b := mustBuild(t, "vm.yaml", y)
		if len(b.Warnings) > 0 {
			t.Errorf("%s: warnings %q", tc.value, b.Warnings)
		}
		r := Solve(b.Input)
		if len(r.Plan.NewNodeClaims) != 1 {
			t.Fatalf("%s: plan %+v", tc.value, r.Plan)
		}
		all := true
		for _, o := range r.Plan.NewNodeClaims[0].InstanceTypes {
			all = all && o.Type.NestedVirtualization
		}
		if all != tc.nested {
			t.Errorf("%s: NodeClaim types all support nested virtualization: %v, want %v (first %s)", tc.value, all, tc.nested,
				r.Plan.NewNodeClaims[0].InstanceTypes[0].Type.Name)
		}
	}
}
