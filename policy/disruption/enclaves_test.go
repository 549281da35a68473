package disruption

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/nodeclass"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spec.enclaveOptions is in the class's hash, as Karpenter's hash covers
// it: enabling, disabling or setting it drifts the class's nodes
// (NodeClassDrift); a class without it keeps the hash it had before.
func TestNodeClassHashCoversEnclaveOptions(t *testing.T) {
	yes := true
	base := func() *apiv1.EC2NodeClass {
		return &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{
			Role: "KarpenterNodeRole", DetailedMonitoring: &yes,
			AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	}
	const before = "3876c2e6808d7304" // TestNodeClassHashCoversCPUOptions' class
	if h := NodeClassHash(base()); h != before {
		t.Errorf("a class without enclaveOptions hashes %s, want %s as before", h, before)
	}
	seen := map[string]string{before: "unset"}
	for _, on := range []bool{true, false} {
		cls := base()
		cls.Spec.EnclaveOptions = &apiv1.EnclaveOptions{Enabled: &on}
		h := NodeClassHash(cls)
		if was, ok := seen[h]; ok {
			t.Errorf("enabled %v hashes as %s", on, was)
		}
		seen[h] = "set"
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{AnnotationNodeClassHash: before}}}
		if reason, _ := Drift(claim, nil, nil, cls, nil, nodeclass.Launched{}); reason != ReasonNodeClassDrift {
			t.Errorf("enclaveOptions.enabled %v set on the class: drift %q, want %s", on, reason, ReasonNodeClassDrift)
		}
	}
}

// A class that enables enclaves no longer offers the types without
// support: their nodes drift as InstanceTypeNotFound, first.
func TestClassOfferingsLeaveOutTypesWithoutEnclaves(t *testing.T) {
	m := catalog.NewMarket()
	m.SetTypes(catalog.New([]*catalog.InstanceType{
		{Name: "m5.xlarge", OnDemandPrice: 0.19, NitroEnclaves: true},
		{Name: "t3.xlarge", OnDemandPrice: 0.17},
	}))
	m.SetZones(map[string][]string{"m5.xlarge": {"us-east-1a"}, "t3.xlarge": {"us-east-1a"}})
	on := true
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{EnclaveOptions: &apiv1.EnclaveOptions{Enabled: &on}}}
	cls.Name = "default"
	cls.Status.Subnets = []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}}
	offered := ClassOfferings(cls, m)
	claim := offeredClaim("t3.xlarge", "us-east-1a", apiv1.CapacityTypeOnDemand, "")
	claim.Annotations = map[string]string{AnnotationNodeClassHash: "another-class-hash"}
	reason, msg := Drift(claim, nil, nil, cls, offered, nodeclass.Launched{})
	if reason != ReasonInstanceTypeNotFound || msg != "instance type t3.xlarge is no longer offered to EC2NodeClass default" {
		t.Errorf("t3.xlarge: %s %q, want %s", reason, msg, ReasonInstanceTypeNotFound)
	}
	if why := InstanceTypeDrift(offeredClaim("m5.xlarge", "us-east-1a", apiv1.CapacityTypeOnDemand, ""), offered, cls.Name); why != "" {
		t.Errorf("m5.xlarge drifted: %s", why)
	}
	off := false
	cls.Spec.EnclaveOptions.Enabled = &off
	if why := InstanceTypeDrift(claim, ClassOfferings(cls, m), cls.Name); why != "" {
		t.Errorf("enclaves disabled: t3.xlarge drifted: %s", why)
	}
}
