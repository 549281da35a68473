package controller

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markDrift marks InstanceTypeNotFound on a claim whose type the live
// catalog no longer describes, and nothing while the market holds no
// live types (the embedded fallback is never the judge).
func TestMarkDriftInstanceTypeNotFound(t *testing.T) {
	pool := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose"},
		Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
			NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}}}}}
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	cls.Status.Subnets = []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}}
	claim := func(name, typ string) *apiv1.NodeClaim {
		nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			apiv1.LabelNodePool: pool.Name, apiv1.LabelInstanceType: typ, apiv1.LabelZone: "us-east-1a",
			apiv1.LabelCapacityType: apiv1.CapacityTypeOnDemand},
			Annotations: map[string]string{disruption.AnnotationNodePoolHashVersion: disruption.NodePoolHashVersion,
				disruption.AnnotationNodePoolHash: disruption.NodePoolHash(pool)}}}
		nc.Spec.NodeClassRef = pool.Spec.Template.Spec.NodeClassRef
		nc.Status.ProviderID = "aws:///us-east-1a/i-" + name
		return nc
	}
	f := kubetest.Start(t, kubetest.World{Pools: []*apiv1.NodePool{pool}, Classes: []*apiv1.EC2NodeClass{cls},
		Claims: []*apiv1.NodeClaim{claim("kept", "m7i.large"), claim("gone", "m5.large")}})
	market := catalog.NewMarket()
	r := &nodeClassReconciler{cl: f.Cluster, log: zap.NewNop(), market: market}
	testwait.Eventually(t, "claims cached", 0, func() bool { return len(f.Cluster.NodeClaims()) == 2 })
	drifted := func(name string) *metav1.Condition {
		nc, err := f.Cluster.NodeClaim(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return apiv1.FindCondition(nc.Status.Conditions, apiv1.ConditionDrifted)
	}

	r.markDrift(context.Background(), cls)
	if c := drifted("gone"); c != nil {
		t.Fatalf("drifted before the live catalog was loaded: %+v", c)
	}

	market.SetTypes(catalog.New([]*catalog.InstanceType{{Name: "m7i.large", OnDemandPrice: 0.1}}))
	r.markDrift(context.Background(), cls)
	c := drifted("gone")
	if c == nil || c.Reason != disruption.ReasonInstanceTypeNotFound ||
		c.Message != "instance type m5.large is no longer offered to EC2NodeClass default" {
		t.Fatalf("gone: %+v, want %s", c, disruption.ReasonInstanceTypeNotFound)
	}
	if c := drifted("kept"); c != nil {
		t.Errorf("kept drifted: %+v", c)
	}
}
