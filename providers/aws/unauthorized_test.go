package aws_test

import (
	"context"
	"testing"

	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// A policy refusal is reported as such, never as a lack of capacity: with
// one offering refused (ec2:RunInstances denied for its type) and the
// other out of capacity, Launch fails with an *AuthorizationError naming
// the action and resource, and only the real ICE goes to the ICE cache.
func TestRefusalIsNotInsufficientCapacity(t *testing.T) {
	worker := awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w",
		Policies: []*policy.Policy{policy.MustParse("w", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"*","Resource":"*"},
		{"Sid":"NoC5","Effect":"Deny","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"ec2:InstanceType":"c5.large"}}},
		{"Sid":"NoTerminate","Effect":"Deny","Action":"ec2:TerminateInstances","Resource":"*"}]}`))}}
	srv, url := endpoint(t, simec2.Options{Guard: awsauth.NewGuard(worker)})
	srv.SetInsufficientCapacity("m5.large", "", "", true)
	ice := aws.NewICECache(0, nil)
	c := client(t, url, aws.Options{Key: aws.StaticKey{AccessKeyID: worker.AccessKeyID, SecretAccessKey: worker.SecretAccessKey}, ICECache: ice})
	ctx := context.Background()
	sn := subnets(t, c)[:1]

	_, err := c.Launch(ctx, launchReq(sn, "on-demand", "m5.large", "c5.large"))
	ae, ok := aws.AsUnauthorized(err)
	if !ok || aws.IsInsufficientCapacity(err) || ae.Action != "ec2:RunInstances" || ae.Resource != "arn:aws:ec2:us-east-1:123456789012:instance/*" {
		t.Fatalf("Launch: %v (unauthorized %v %+v)", err, ok, ae)
	}
	if got := ice.Entries(); len(got) != 1 {
		t.Errorf("ICE cache %v, want the m5.large offering only", got)
	}
	for k := range ice.Entries() {
		if k.InstanceType != "m5.large" {
			t.Errorf("ICE cache marks %v", k)
		}
	}

	srv.SetInsufficientCapacity("m5.large", "", "", false)
	inst, err := c.Launch(ctx, launchReq(sn, "on-demand", "m5.large"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Terminate(ctx, inst.ID)
	if ae, ok := aws.AsUnauthorized(err); !ok || ae.Action != "ec2:TerminateInstances" || ae.Code != "UnauthorizedOperation" {
		t.Errorf("Terminate: %v (%+v)", err, ae)
	}
}
