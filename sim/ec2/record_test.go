package ec2_test

import (
	"context"
	"strings"
	"testing"

	sdkec2 "github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/joinery/joinery/sim/ec2"
)

// Recording is off by default; once on, every request is logged with its
// Action, headers and Query parameters, whatever the answer, and the error
// code it was refused with.
func TestRecordsRequests(t *testing.T) {
	srv, client := start(t, ec2.Options{})
	ctx := context.Background()
	if _, err := client.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Fatalf("recorded %d requests with recording off", len(got))
	}
	srv.SetRecording(true)
	// Refused requests are recorded too (InvalidInstanceID.NotFound here).
	if _, err := client.DescribeInstances(ctx, &sdkec2.DescribeInstancesInput{InstanceIds: []string{"i-00000000000000001"}}); err == nil {
		t.Fatal("DescribeInstances of an unknown id succeeded")
	}
	if _, err := client.DescribeSubnets(ctx, &sdkec2.DescribeSubnetsInput{}); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 2 || got[0].Action != "DescribeInstances" || got[1].Action != "DescribeSubnets" {
		t.Fatalf("recorded %+v", got)
	}
	if got[0].Params.Get("InstanceId.1") != "i-00000000000000001" {
		t.Errorf("params %v", got[0].Params)
	}
	if got[0].ErrorCode != "InvalidInstanceID.NotFound" || got[1].ErrorCode != "" {
		t.Errorf("answers recorded as %q and %q, want InvalidInstanceID.NotFound and none", got[0].ErrorCode, got[1].ErrorCode)
	}
	if !strings.Contains(got[0].Header.Get("User-Agent"), "aws-sdk-go-v2") {
		t.Errorf("User-Agent %q", got[0].Header.Get("User-Agent"))
	}
	got[0].Params.Set("InstanceId.1", "changed")
	if srv.Requests()[0].Params.Get("InstanceId.1") != "i-00000000000000001" {
		t.Error("Requests returns the server's own parameters, not copies")
	}
	srv.ResetRequests()
	if len(srv.Requests()) != 0 {
		t.Error("ResetRequests kept requests")
	}
}
