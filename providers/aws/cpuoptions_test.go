package aws_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
)

// spec.cpuOptions reaches CreateLaunchTemplate as Karpenter's provider
// sends it: LaunchTemplateData.CpuOptions.NestedVirtualization when set,
// no CpuOptions at all when not. EC2 launches a type that supports nested
// virtualization with it, refuses one that does not (UnsupportedOperation,
// not a capacity shortage), takes "disabled" on any type, and refuses a
// value it does not have.
func TestLaunchTemplateCarriesCPUOptions(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, sg := w.imageAndGroup(t)
	sn := subnets(t, w.c)
	w.ec2.SetRecording(true)
	template := func(name, nested string) aws.LaunchTemplate {
		t.Helper()
		lt, err := w.c.EnsureLaunchTemplate(ctx, name, aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}, NestedVirtualization: nested})
		if err != nil {
			t.Fatal(err)
		}
		return lt
	}
	template("joinery/nested", apiv1.NestedVirtualizationEnabled)
	template("joinery/not-nested", apiv1.NestedVirtualizationDisabled)
	template("joinery/plain", "")
	sent := map[string]string{}
	for _, r := range w.ec2.Requests() {
		if r.Action != "CreateLaunchTemplate" {
			continue
		}
		var cpu []string
		for k, v := range r.Params {
			if strings.HasPrefix(k, "LaunchTemplateData.CpuOptions.") {
				cpu = append(cpu, k+"="+v[0])
			}
		}
		sent[r.Params.Get("LaunchTemplateName")] = strings.Join(cpu, " ")
	}
	for name, want := range map[string]string{
		"joinery/nested":     "LaunchTemplateData.CpuOptions.NestedVirtualization=enabled",
		"joinery/not-nested": "LaunchTemplateData.CpuOptions.NestedVirtualization=disabled",
		"joinery/plain":      "",
	} {
		if sent[name] != want {
			t.Errorf("%s: CpuOptions sent %q, want %q", name, sent[name], want)
		}
	}

	launch := func(template, nodeClaim string, types ...string) (aws.Instance, error) {
		req := launchReq(sn, apiv1.CapacityTypeOnDemand, types...)
		req.LaunchTemplateName, req.NodeClaim = template, nodeClaim
		return w.c.Launch(ctx, req)
	}
	in, err := launch("joinery/nested", "general-purpose-nv001", "m8i.large")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); got.NestedVirtualization != apiv1.NestedVirtualizationEnabled {
		t.Errorf("m8i.large launched with nested virtualization %q", got.NestedVirtualization)
	}
	_, err = launch("joinery/nested", "general-purpose-nv002", "m5.large")
	var none *aws.NoLaunchError
	if !errors.As(err, &none) || len(none.Errors) != len(sn) || aws.IsInsufficientCapacity(err) {
		t.Errorf("m5.large with nested virtualization: %v, want one refused override per zone, not a capacity shortage", err)
	} else {
		for _, fe := range none.Errors {
			if fe.Code != "UnsupportedOperation" || !strings.Contains(fe.Message, "m5.large") {
				t.Errorf("override %s: %s %q, want UnsupportedOperation naming the type", fe.Offering, fe.Code, fe.Message)
			}
		}
	}
	in, err = launch("joinery/not-nested", "general-purpose-nv003", "m5.large")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); got.NestedVirtualization != apiv1.NestedVirtualizationDisabled {
		t.Errorf("m5.large launched with nested virtualization %q, want disabled", got.NestedVirtualization)
	}
	in, err = launch("joinery/plain", "general-purpose-nv004", "m5.large")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.ec2.Instance(in.ID); got.NestedVirtualization != "" {
		t.Errorf("plain m5.large has nested virtualization %q", got.NestedVirtualization)
	}
	_, err = w.c.EnsureLaunchTemplate(ctx, "joinery/bad", aws.LaunchTemplateData{ImageID: img, NestedVirtualization: "on"})
	if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "Value (on) for parameter NestedVirtualization") {
		t.Errorf("nested virtualization \"on\": %v, want InvalidParameterValue", err)
	}
}
