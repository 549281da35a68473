package iam_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/iam"
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
	worker := awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", Account: "123456789012",
		AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w", Policies: []*policy.Policy{policy.MustParse("worker", []byte(profilePolicy))}}
	srv := iam.New(iam.Options{Roles: []string{iam.DefaultRole, "Admin"}, Guard: awsauth.NewGuard(worker)})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := func(id awsauth.Identity) *sdkiam.Client {
		return sdkiam.New(sdkiam.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}, Credentials: id.CredentialsProvider()})
	}
	c, ctx := client(worker), context.Background()
	stranger := worker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	if _, err := client(stranger).GetInstanceProfile(ctx, &sdkiam.GetInstanceProfileInput{InstanceProfileName: aws.String("x")}); code(err) != "InvalidClientTokenId" {
		t.Errorf("unknown key: %v", err)
	}
	create := func(name, cluster string) error {
		_, err := c.CreateInstanceProfile(ctx, &sdkiam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name),
			Tags: []types.Tag{{Key: aws.String("cluster"), Value: aws.String(cluster)}}})
		return err
	}
	if err := create("theirs", "c2"); code(err) != "AccessDenied" || !strings.Contains(err.Error(), "iam:CreateInstanceProfile on resource: arn:aws:iam::123456789012:instance-profile/theirs") {
		t.Errorf("another cluster's tag: %v", err)
	}
	if err := create("mine", "c1"); err != nil {
		t.Fatal(err)
	}
	add := func(role string) error {
		_, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("mine"), RoleName: aws.String(role)})
		return err
	}
	if err := add("Admin"); code(err) != "AccessDenied" || !strings.Contains(err.Error(), "iam:PassRole on resource: arn:aws:iam::123456789012:role/Admin") {
		t.Errorf("passing another role: %v", err)
	}
	if err := add(iam.DefaultRole); err != nil {
		t.Fatal(err)
	}
	if got := srv.InstanceProfileRoles("mine"); len(got) != 1 || got[0] != "arn:aws:iam::123456789012:role/"+iam.DefaultRole {
		t.Errorf("InstanceProfileRoles: %v", got)
	}
	if _, err := c.ListInstanceProfiles(ctx, &sdkiam.ListInstanceProfilesInput{}); code(err) != "AccessDenied" {
		t.Errorf("an action the policy lacks: %v", err)
	}
}
