package iam_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/joinery/joinery/sim/iam"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func TestInstanceProfiles(t *testing.T) {
	srv := iam.New(iam.Options{})
	c := simtest.Client(sdkiam.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	ctx := context.Background()
	name := aws.String("joinery_1")
	_, err := c.CreateInstanceProfile(ctx, &sdkiam.CreateInstanceProfileInput{InstanceProfileName: name, Path: aws.String("/karpenter/"),
		Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateInstanceProfile(ctx, &sdkiam.CreateInstanceProfileInput{InstanceProfileName: name}); simtest.Code(err) != "EntityAlreadyExists" {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("nope")}); simtest.Code(err) != "NoSuchEntity" {
		t.Errorf("unknown role: %v", err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String(iam.DefaultRole)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &sdkiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String(iam.DefaultRole)}); simtest.Code(err) != "LimitExceeded" {
		t.Errorf("second role: %v", err)
	}
	if _, err := c.TagInstanceProfile(ctx, &sdkiam.TagInstanceProfileInput{InstanceProfileName: name, Tags: []types.Tag{{Key: aws.String("k2"), Value: aws.String("v2")}}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetInstanceProfile(ctx, &sdkiam.GetInstanceProfileInput{InstanceProfileName: name})
	if err != nil {
		t.Fatal(err)
	}
	ip := got.InstanceProfile
	if aws.ToString(ip.Arn) != "arn:aws:iam::123456789012:instance-profile/karpenter/joinery_1" || len(ip.Roles) != 1 ||
		aws.ToString(ip.Roles[0].RoleName) != iam.DefaultRole || len(ip.Tags) != 2 || ip.CreateDate == nil {
		t.Errorf("%+v", ip)
	}
	if arn, ok := srv.InstanceProfileARN("joinery_1"); !ok || arn != aws.ToString(ip.Arn) {
		t.Errorf("InstanceProfileARN = %s %v", arn, ok)
	}
	list, err := c.ListInstanceProfiles(ctx, &sdkiam.ListInstanceProfilesInput{PathPrefix: aws.String("/karpenter/")})
	if err != nil || len(list.InstanceProfiles) != 1 {
		t.Errorf("list: %+v, %v", list, err)
	}
	if other, err := c.ListInstanceProfiles(ctx, &sdkiam.ListInstanceProfilesInput{PathPrefix: aws.String("/other/")}); err != nil || len(other.InstanceProfiles) != 0 {
		t.Errorf("list other prefix: %+v, %v", other, err)
	}
	if _, err := c.DeleteInstanceProfile(ctx, &sdkiam.DeleteInstanceProfileInput{InstanceProfileName: name}); simtest.Code(err) != "DeleteConflict" {
		t.Errorf("delete with role: %v", err)
	}
	if _, err := c.RemoveRoleFromInstanceProfile(ctx, &sdkiam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String(iam.DefaultRole)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteInstanceProfile(ctx, &sdkiam.DeleteInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInstanceProfile(ctx, &sdkiam.GetInstanceProfileInput{InstanceProfileName: name}); simtest.Code(err) != "NoSuchEntity" {
		t.Errorf("after delete: %v", err)
	}
	if r, err := c.GetRole(ctx, &sdkiam.GetRoleInput{RoleName: aws.String(iam.DefaultRole)}); err != nil || aws.ToString(r.Role.Arn) != "arn:aws:iam::123456789012:role/"+iam.DefaultRole {
		t.Errorf("GetRole: %+v, %v", r, err)
	}
}
