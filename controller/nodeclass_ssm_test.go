package controller

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	simssm "github.com/joinery/joinery/sim/ssm"
	"go.uber.org/zap"
)

// An AMI selector term's own SSM parameter selects the image it holds, as
// Karpenter's does: a parameter that does not exist, or whose value is not
// an image id, selects nothing, and the other terms still count.
func TestAMIsFromTheUsersSSMParameter(t *testing.T) {
	ec2 := simec2.New(simec2.Options{ClusterTag: "ssm-test"})
	ec2URL, stop, err := ec2.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ssm := simssm.New(simssm.Options{Source: ec2.SSMParameter})
	ssmURL, stopSSM, err := ssm.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSSM)
	cc, err := aws.New(context.Background(), aws.Options{Endpoint: ec2URL, SSMEndpoint: ssmURL, ClusterName: "ssm-test", MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	imgs := ec2.Images()
	mine, other := imgs[0], imgs[1]
	ssm.Put("/team/node-ami", mine.ID)
	ssm.Put("/team/not-an-ami", "hello")
	r := &nodeClassReconciler{cloud: cc, log: zap.NewNop()}
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{AMIFamily: apiv1.AMIFamilyAL2023, AMISelectorTerms: []apiv1.AMISelectorTerm{
		{SSMParameter: "/team/node-ami"}, {SSMParameter: "/team/missing"}, {SSMParameter: "/team/not-an-ami"}}}}
	got, err := r.amis(context.Background(), cls)
	if err != nil || len(got) != 1 || got[0].ID != mine.ID {
		t.Fatalf("amis %+v, %v; want only %s", got, err, mine.ID)
	}
	// The parameter is read at each resolution: repointing it moves the
	// class to the new image (and its nodes drift on AMIDrift).
	ssm.Put("/team/node-ami", other.ID)
	if got, err := r.amis(context.Background(), cls); err != nil || len(got) != 1 || got[0].ID != other.ID {
		t.Errorf("after repointing: %+v, %v; want %s", got, err, other.ID)
	}
	// The parameter decides alone: the term's other fields do not narrow it.
	cls.Spec.AMISelectorTerms = []apiv1.AMISelectorTerm{{SSMParameter: "/team/node-ami", Name: "no-such-image-*", Owner: "self"}}
	if got, err := r.amis(context.Background(), cls); err != nil || len(got) != 1 || got[0].ID != other.ID {
		t.Errorf("a parameter term with a name: %+v, %v; want %s", got, err, other.ID)
	}
	cls.Spec.AMISelectorTerms = []apiv1.AMISelectorTerm{{SSMParameter: "/team/missing"}}
	if got, err := r.amis(context.Background(), cls); err != nil || len(got) != 0 {
		t.Errorf("a missing parameter alone: %+v, %v; want none", got, err)
	}
}
