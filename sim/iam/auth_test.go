package iam_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/sim/internal/simtest"
)

const profilePolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"Create","Effect":"Allow","Action":["iam:CreateInstanceProfile","iam:TagInstanceProfile"],"Resource":"arn:aws:iam::123456789012:instance-profile/*",
  "Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1"}}},
 {"Sid":"Manage","Effect":"Allow","Action":["iam:AddRoleToInstanceProfile","iam:DeleteInstanceProfile","iam:RemoveRoleFromInstanceProfile"],
  "Resource":"arn:aws:iam::123456789012:instance-profile/*","Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"}}},
 {"Sid":"Read","Effect":"Allow","Action":"iam:GetInstanceProfile","Resource":"arn:aws:iam::123456789012:instance-profile/*"},
 {"Sid":"Pass","Effect":"Allow","Action":"iam:PassRole","Resource":"arn:aws:iam::123456789012:role/KarpenterNodeRole-production",
  "Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}}]}`

func TestAuthorizationAsIAMAnswers(t *testing.T) {
	worker := simtest.Worker(profilePolicy)
	srv := iam.New(iam.Options{Roles: []string{iam.DefaultRole, "Admin"}, Guard: awsauth.NewGuard(worker)})
	url := simtest.Serve(t, srv)
	client := func(id awsauth.Identity) *sdkiam.Client {
		return simtest.Client(sdkiam.NewFromConfig, url, id.CredentialsProvider())
	}
	c, ctx := client(worker), context.Background()
	if _, err := client(simtest.Stranger(worker)).GetInstanceProfile(ctx, &sdkiam.GetInstanceProfileInput{InstanceProfileName: aws.String("x")}); simtest.Code(err) != "InvalidClientTokenId" {
		t.Errorf("unknown key: %v", err)
	}
	create := func(name, cluster string) error {
		_, err := c.CreateInstanceProfile(ctx, &sdkiam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name),
			Tags: []types.Tag{{Key: aws.String("cluster"), Value: aws.String(cluster)}}})
		return err
	}
	if err := create("theirs", "c2"); simtest.Code(err) != "AccessDenied" || !strings.Contains(err.Error(), "iam:CreateInstanceProfile on resource: arn:aws:iam::123456789012:instance-profile/theirs") {
		t.Errorf("another cluster's tag: %v", err)
	}
	if err := create("mine", "c1"); err != nil {
		t.Fatal(err)
	}
	add := func(role string) error {
		_, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("mine"), RoleName: aws.String(role)})
		return err
	}
	if err := add("Admin"); simtest.Code(err) != "AccessDenied" || !strings.Contains(err.Error(), "iam:PassRole on resource: arn:aws:iam::123456789012:role/Admin") {
		t.Errorf("passing another role: %v", err)
	}
	if err := add(iam.DefaultRole); err != nil {
		t.Fatal(err)
	}
	if got := srv.InstanceProfileRoles("mine"); len(got) != 1 || got[0] != "arn:aws:iam::123456789012:role/"+iam.DefaultRole {
		t.Errorf("InstanceProfileRoles: %v", got)
	}
	if _, err := c.ListInstanceProfiles(ctx, &sdkiam.ListInstanceProfilesInput{}); simtest.Code(err) != "AccessDenied" {
		t.Errorf("an action the policy lacks: %v", err)
	}
}
