package ec2_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/ec2"
)

// groupPolicy grants placement groups as deploy/iam-policy.json does: a
// cluster group tagged with the cluster, its tags at creation, deleting
// the cluster's own.
const groupPolicy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":"ec2:CreatePlacementGroup","Resource":"arn:aws:ec2:us-east-1:*:placement-group/*",
  "Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1","ec2:PlacementGroupStrategy":"cluster"}}},
 {"Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:*:placement-group/*",
  "Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1","ec2:CreateAction":"CreatePlacementGroup"}}},
 {"Effect":"Allow","Action":"ec2:DeletePlacementGroup","Resource":"arn:aws:ec2:us-east-1:*:placement-group/*",
  "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"}}}]}`

// CreatePlacementGroup and DeletePlacementGroup are authorized on the
// group's ARN with its request or resource tags and its strategy.
func TestPlacementGroupAuthorization(t *testing.T) {
	worker := authWorker
	worker.Policies = []*policy.Policy{policy.MustParse("worker", []byte(groupPolicy))}
	srv := ec2.New(ec2.Options{BootDelay: -1, Guard: awsauth.NewGuard(worker, authAdmin)})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	client := func(id awsauth.Identity) *sdkec2.Client {
		return sdkec2.New(sdkec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: id.CredentialsProvider(),
			Retryer: aws.NopRetryer{}, HTTPClient: bufferedBodies{awshttp.NewBuildableClient()}})
	}
	w, admin, ctx := client(worker), client(authAdmin), context.Background()
	create := func(c *sdkec2.Client, name string, strategy types.PlacementStrategy, tags ...string) error {
		_, err := c.CreatePlacementGroup(ctx, &sdkec2.CreatePlacementGroupInput{GroupName: aws.String(name), Strategy: strategy,
			TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypePlacementGroup, Tags: tagList(tags...)}}})
		return err
	}
	del := func(c *sdkec2.Client, name string) error {
		_, err := c.DeletePlacementGroup(ctx, &sdkec2.DeletePlacementGroupInput{GroupName: aws.String(name)})
		return err
	}
	for _, c := range []struct {
		name     string
		strategy types.PlacementStrategy
		tags     []string
		want     string
	}{
		{"untagged", types.PlacementStrategyCluster, nil, "UnauthorizedOperation"},
		{"other-cluster", types.PlacementStrategyCluster, []string{"cluster", "c2"}, "UnauthorizedOperation"},
		{"spread", types.PlacementStrategySpread, []string{"cluster", "c1"}, "UnauthorizedOperation"},
		{"mine", types.PlacementStrategyCluster, []string{"cluster", "c1"}, ""},
	} {
		if err := create(w, c.name, c.strategy, c.tags...); apiCode(err) != c.want {
			t.Errorf("create %s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := create(admin, "theirs", types.PlacementStrategyCluster); err != nil {
		t.Fatal(err)
	}
	if err := del(w, "theirs"); apiCode(err) != "UnauthorizedOperation" {
		t.Errorf("delete a group without the cluster tag: %v, want UnauthorizedOperation", err)
	}
	if err := del(w, "mine"); err != nil {
		t.Errorf("delete mine: %v", err)
	}
	if n := len(srv.PlacementGroups()); n != 1 {
		t.Errorf("%d groups left, want theirs", n)
	}
}
