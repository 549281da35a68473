package ec2_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/ec2"
)

// authPolicy grants what a cluster "c1" worker launches with, scoped by
// the cluster tag, as deploy/iam-policy.json does.
const authPolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"Read","Effect":"Allow","Action":"ec2:Describe*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}},
 {"Sid":"Shared","Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":["arn:aws:ec2:us-east-1::image/*",
  "arn:aws:ec2:us-east-1::snapshot/*","arn:aws:ec2:us-east-1:*:subnet/*","arn:aws:ec2:us-east-1:*:security-group/*",
  "arn:aws:ec2:us-east-1:*:network-interface/*","arn:aws:ec2:us-east-1:*:fleet/*"]},
 {"Sid":"Template","Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":"arn:aws:ec2:us-east-1:*:launch-template/*",
  "Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"}}},
 {"Sid":"Tagged","Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":["arn:aws:ec2:us-east-1:*:instance/*","arn:aws:ec2:us-east-1:*:volume/*"],
  "Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1"}}},
 {"Sid":"TagOnCreate","Effect":"Allow","Action":"ec2:CreateTags","Resource":"*",
  "Condition":{"StringEquals":{"ec2:CreateAction":["CreateFleet","CreateLaunchTemplate"],"aws:RequestTag/cluster":"c1"}}},
 {"Sid":"CreateTemplate","Effect":"Allow","Action":"ec2:CreateLaunchTemplate","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/cluster":"c1"}}},
 {"Sid":"Terminate","Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/cluster":"c1"}}},
 {"Sid":"Pass","Effect":"Allow","Action":"iam:PassRole","Resource":"arn:aws:iam::123456789012:role/Node","Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}}]}`

var (
	authWorker = awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", Account: "123456789012",
		AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w", Policies: []*policy.Policy{policy.MustParse("worker", []byte(authPolicy))}}
	authAdmin = awsauth.Identity{Name: "admin", ARN: "arn:aws:iam::123456789012:user/admin", Account: "123456789012",
		AccessKeyID: "AKIAADMIN00000000001", SecretAccessKey: "a", Policies: []*policy.Policy{policy.AllowAll("admin")}}
)

// guarded serves an endpoint with a guard; clients(id) signs as id.
func guarded(t *testing.T) (*ec2.Server, func(awsauth.Identity) *sdkec2.Client) {
	t.Helper()
	srv := ec2.New(ec2.Options{BootDelay: -1, Guard: awsauth.NewGuard(authWorker, authAdmin),
		InstanceProfile: func(name string) (string, bool) { return "arn:aws:iam::123456789012:instance-profile/" + name, true },
		InstanceProfileRoles: func(name string) []string {
			if name == "other" {
				return []string{"arn:aws:iam::123456789012:role/Admin"}
			}
			return []string{"arn:aws:iam::123456789012:role/Node"}
		}})
	url, stop, err := srv.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, func(id awsauth.Identity) *sdkec2.Client {
		return sdkec2.New(sdkec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: id.CredentialsProvider(),
			Retryer: aws.NopRetryer{}, HTTPClient: bufferedBodies{awshttp.NewBuildableClient()}})
	}
}

func tagList(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func template(t *testing.T, c *sdkec2.Client, srv *ec2.Server, name, profile string, tags ...string) error {
	_, err := c.CreateLaunchTemplate(context.Background(), &sdkec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &types.RequestLaunchTemplateData{ImageId: aws.String(recommended(t, srv, "x86_64", "standard")),
			IamInstanceProfile: &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(profile)}},
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeLaunchTemplate, Tags: tagList(tags...)}}})
	return err
}

func launch(c *sdkec2.Client, lt, subnet string, tags map[types.ResourceType][]types.Tag) (*sdkec2.CreateFleetOutput, error) {
	in := fleetFrom(lt, "on-demand", types.FleetLaunchTemplateOverridesRequest{InstanceType: "m5.large", SubnetId: aws.String(subnet)})
	in.TagSpecifications = nil
	for rt, tl := range tags {
		in.TagSpecifications = append(in.TagSpecifications, types.TagSpecification{ResourceType: rt, Tags: tl})
	}
	return c.CreateFleet(context.Background(), in)
}

func TestAuthenticationAsEC2Answers(t *testing.T) {
	_, client := guarded(t)
	stranger := authWorker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	_, err := client(stranger).DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{})
	if apiCode(err) != "AuthFailure" {
		t.Errorf("unknown key: %v, want AuthFailure", err)
	}
	wrong := authWorker
	wrong.SecretAccessKey = "guess"
	if _, err := client(wrong).DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{}); apiCode(err) != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	if _, err := client(authWorker).DescribeInstances(context.Background(), &sdkec2.DescribeInstancesInput{}); err != nil {
		t.Errorf("worker: %v", err)
	}
}

func TestAuthorizationPerCall(t *testing.T) {
	srv, client := guarded(t)
	w, admin, ctx := client(authWorker), client(authAdmin), context.Background()
	sub := subnetsByZone(t, w)["us-east-1a"]

	err := template(t, w, srv, "untagged", "node")
	if apiCode(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), "ec2:CreateLaunchTemplate on resource: arn:aws:ec2:us-east-1:123456789012:launch-template/*") {
		t.Fatalf("CreateLaunchTemplate without the cluster tag: %v", err)
	}
	checkEncoded(t, err, "ec2:CreateLaunchTemplate")
	if err := template(t, w, srv, "mine", "node", "cluster", "c1"); err != nil {
		t.Fatal(err)
	}
	if err := template(t, admin, srv, "theirs", "node", "cluster", "c2"); err != nil {
		t.Fatal(err)
	}
	tagged := map[types.ResourceType][]types.Tag{types.ResourceTypeInstance: tagList("cluster", "c1"), types.ResourceTypeVolume: tagList("cluster", "c1")}
	out, err := launch(w, "mine", sub, tagged)
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("tagged launch: %v %+v", err, out)
	}
	mine := out.Instances[0].InstanceIds[0]

	// Another cluster's template: refused for the whole request.
	if _, err := launch(w, "theirs", sub, tagged); apiCode(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), "ec2:CreateFleet on resource: arn:aws:ec2:us-east-1:123456789012:launch-template/lt-") {
		t.Errorf("another cluster's template: %v", err)
	}
	// Volumes untagged: ec2:CreateFleet on volume/* needs the tag.
	if _, err := launch(w, "mine", sub, map[types.ResourceType][]types.Tag{types.ResourceTypeInstance: tagList("cluster", "c1")}); apiCode(err) != "UnauthorizedOperation" ||
		!strings.Contains(err.Error(), "ec2:CreateFleet on resource: arn:aws:ec2:us-east-1:123456789012:volume/*") {
		t.Errorf("untagged volumes: %v", err)
	}
	// A profile whose role the worker may not pass: refused per override
	// (ec2:RunInstances' launch), in the answer's Errors, not the call.
	if err := template(t, w, srv, "other-role", "other", "cluster", "c1"); err != nil {
		t.Fatal(err)
	}
	out, err = launch(w, "other-role", sub, tagged)
	if err != nil || len(out.Instances) != 0 || len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "UnauthorizedOperation" || !strings.Contains(aws.ToString(out.Errors[0].ErrorMessage), "iam:PassRole on resource: arn:aws:iam::123456789012:role/Admin") {
		t.Errorf("PassRole of another role: %v %+v", err, out)
	}

	out, err = launch(admin, "theirs", sub, map[types.ResourceType][]types.Tag{types.ResourceTypeInstance: tagList("cluster", "c2")})
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("admin launch: %v %+v", err, out)
	}
	theirs := out.Instances[0].InstanceIds[0]
	if _, err := w.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{mine, theirs}}); apiCode(err) != "UnauthorizedOperation" ||
		!strings.Contains(err.Error(), "instance/"+theirs) {
		t.Errorf("terminating another cluster's instance: %v", err)
	}
	if _, err := w.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{mine}}); err != nil {
		t.Errorf("terminating its own: %v", err)
	}
	// DryRun answers the authorization question.
	dry := func(c *sdkec2.Client) string {
		_, err := c.TerminateInstances(ctx, &sdkec2.TerminateInstancesInput{InstanceIds: []string{theirs}, DryRun: aws.Bool(true)})
		return apiCode(err)
	}
	if got, got2 := dry(w), dry(admin); got != "UnauthorizedOperation" || got2 != "DryRunOperation" {
		t.Errorf("DryRun: worker %s, admin %s", got, got2)
	}
}

// checkEncoded: the encoded message decodes (base64 JSON) and names the action.
func checkEncoded(t *testing.T, err error, action string) {
	t.Helper()
	msg := err.Error()
	i := strings.Index(msg, "Encoded authorization failure message: ")
	if i < 0 {
		t.Fatalf("no encoded message in %q", msg)
	}
	enc := strings.Fields(msg[i+len("Encoded authorization failure message: "):])[0]
	raw, derr := base64.StdEncoding.DecodeString(enc)
	if derr != nil || !strings.Contains(string(raw), `"action":"`+action+`"`) {
		t.Errorf("encoded %q: %s %v", enc, raw, derr)
	}
}
