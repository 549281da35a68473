package aws_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
)

// spec.enclaveOptions reaches CreateLaunchTemplate as Karpenter's provider
// sends it: LaunchTemplateData.EnclaveOptions.Enabled on every template,
// false when the class does not enable enclaves. EC2 launches a type with
// Nitro Enclaves support with them and refuses one without
// (UnsupportedOperation, not a capacity shortage). A template enabling
// them is named apart; one that does not keeps the name it had before
// the field.
func TestLaunchTemplateCarriesEnclaveOptions(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, sg := w.imageAndGroup(t)
	sn := subnets(t, w.c)
	w.ec2.SetRecording(true)
	data := func(on bool) aws.LaunchTemplateData {
		return aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}, EnclavesEnabled: on}
	}
	for name, on := range map[string]bool{"joinery/enclaves": true, "joinery/plain": false} {
		if _, err := w.c.EnsureLaunchTemplate(ctx, name, data(on)); err != nil {
			t.Fatal(err)
		}
	}
	sent := map[string]string{}
	for _, r := range w.ec2.Requests() {
		if r.Action == "CreateLaunchTemplate" {
			sent[r.Params.Get("LaunchTemplateName")] = r.Params.Get("LaunchTemplateData.EnclaveOptions.Enabled")
		}
	}
	if sent["joinery/enclaves"] != "true" || sent["joinery/plain"] != "false" {
		t.Errorf("EnclaveOptions.Enabled sent %v, want true and false", sent)
	}
	on, _ := nodeclass.LaunchTemplateName("c", data(true))
	off, _ := nodeclass.LaunchTemplateName("c", data(false))
	before, _ := nodeclass.LaunchTemplateName("c", struct {
		ImageID, UserData, InstanceProfile string
		SecurityGroupIDs                   []string
		BlockDevices                       []apiv1.BlockDeviceMapping
		MetadataOptions                    *apiv1.MetadataOptions
		Tags                               map[string]string
	}{ImageID: img, SecurityGroupIDs: []string{sg}})
	if on == off || off != before {
		t.Errorf("template names: enabled %s, disabled %s, before the field %s", on, off, before)
	}

	launch := func(template, nodeClaim string, types ...string) (aws.Instance, error) {
		req := launchReq(sn, apiv1.CapacityTypeOnDemand, types...)
		req.LaunchTemplateName, req.NodeClaim = template, nodeClaim
		return w.c.Launch(ctx, req)
	}
	in, err := launch("joinery/enclaves", "general-purpose-ne001", "m5.xlarge")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); !got.EnclavesEnabled {
		t.Error("m5.xlarge launched without enclaves")
	}
	_, err = launch("joinery/enclaves", "general-purpose-ne002", "t3.xlarge")
	var none *aws.NoLaunchError
	if !errors.As(err, &none) || len(none.Errors) != len(sn) || aws.IsInsufficientCapacity(err) {
		t.Errorf("t3.xlarge with enclaves: %v, want one refused override per zone, not a capacity shortage", err)
	} else {
		for _, fe := range none.Errors {
			if fe.Code != "UnsupportedOperation" || !strings.Contains(fe.Message, "t3.xlarge") {
				t.Errorf("override %s: %s %q, want UnsupportedOperation naming the type", fe.Offering, fe.Code, fe.Message)
			}
		}
	}
	in, err = launch("joinery/plain", "general-purpose-ne003", "t3.xlarge")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); got.EnclavesEnabled {
		t.Error("plain t3.xlarge has enclaves enabled")
	}
}
