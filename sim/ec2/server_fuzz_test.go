package ec2

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzServeHTTP: any form-encoded request body gets an EC2 answer (an XML
// response or an XML error with a code), never a panic or a 500 that is not
// an EC2 InternalError.
//
//	go test -run '^$' -fuzz FuzzServeHTTP -fuzztime 10m ./sim/ec2/
func FuzzServeHTTP(f *testing.F) {
	v := "&Version=" + APIVersion
	for _, s := range []string{
		"Action=DescribeInstances" + v,
		"Action=DescribeInstances" + v + "&Filter.1.Name=instance-state-name&Filter.1.Value.1=running&MaxResults=5",
		"Action=DescribeInstances" + v + "&InstanceId.1=i-00000000000000001&NextToken=abc",
		"Action=DescribeInstanceTypes" + v + "&InstanceType.1=m5.large&InstanceType.2=c6g.xlarge",
		"Action=DescribeInstanceTypeOfferings" + v + "&LocationType=availability-zone&Filter.1.Name=instance-type&Filter.1.Value.1=m5.*",
		"Action=DescribeSubnets" + v + "&Filter.1.Name=tag:karpenter.sh/discovery&Filter.1.Value.1=joinery-local",
		"Action=DescribeSecurityGroups" + v + "&GroupId.1=sg-1",
		"Action=CreateFleet" + v + "&Type=instant&TargetCapacitySpecification.TotalTargetCapacity=1&TargetCapacitySpecification.DefaultTargetCapacityType=spot" +
			"&LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName=lt&LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version=$Latest" +
			"&LaunchTemplateConfigs.1.Overrides.1.InstanceType=m5.large&LaunchTemplateConfigs.1.Overrides.1.SubnetId=subnet-1&LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone=us-east-1a" +
			"&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=a&TagSpecification.1.Tag.1.Value=b",
		"Action=TerminateInstances" + v + "&InstanceId.1=i-00000000000000001",
		"Action=CreateTags" + v + "&ResourceId.1=i-1&Tag.1.Key=k&Tag.1.Value=v",
		"Action=RunInstances" + v,
		"Action=DescribeInstances&Version=1999-01-01",
		"Action=DescribeInstances" + v + "&DryRun=true",
		"Action=DescribeInstances" + v + "&MaxResults=-1&Filter.0.Name=x&Filter.99999999999999999999.Name=y",
		"%zz=%",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := New(Options{BootDelay: -1, TerminateDelay: -1})
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			if err := xml.Unmarshal(rec.Body.Bytes(), new(struct{ XMLName xml.Name })); err != nil {
				t.Fatalf("200 with a body that is not XML: %v\n%s", err, rec.Body.String())
			}
			return
		}
		var e struct {
			Errors struct {
				Error struct{ Code, Message string }
			}
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Errors.Error.Code == "" {
			t.Fatalf("status %d without an EC2 error code (%v):\n%s", rec.Code, err, rec.Body.String())
		}
		if e.Errors.Error.Message == "" {
			t.Fatalf("error %s without a message", e.Errors.Error.Code)
		}
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("internal error for %q: %s", body, e.Errors.Error.Message)
		}
	})
}
