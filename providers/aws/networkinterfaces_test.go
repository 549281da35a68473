package aws_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
)

// The launch template's NetworkInterfaces as Karpenter builds them: the
// class's interfaces (groups on each; public IP and prefixes only on the
// ENA ones), else one efa interface per card for a NodeClaim requesting
// EFA (device 0 on card 0, 1 on the others), else the one primary.
func TestLaunchTemplateNetworkInterfaces(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, sg := w.imageAndGroup(t)
	w.ec2.SetRecording(true)
	no, two := false, int32(2)
	base := aws.LaunchTemplateData{ImageID: img, SecurityGroupIDs: []string{sg}, AssociatePublicIPAddress: &no, IPv4PrefixCount: &two}
	classNIs := base
	classNIs.NetworkInterfaces = []apiv1.NetworkInterface{
		{InterfaceType: apiv1.InterfaceTypeInterface}, {DeviceIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly},
		{NetworkCardIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly},
	}
	efa := base
	efa.EFAInterfaces = 2
	for name, d := range map[string]aws.LaunchTemplateData{"joinery/class": classNIs, "joinery/efa": efa, "joinery/plain": base} {
		if _, err := w.c.EnsureLaunchTemplate(ctx, name, d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	sent := map[string]string{}
	for _, r := range w.ec2.Requests() {
		if r.Action != "CreateLaunchTemplate" {
			continue
		}
		var kv []string
		for k, v := range r.Params {
			if rest, ok := strings.CutPrefix(k, "LaunchTemplateData.NetworkInterface."); ok {
				kv = append(kv, rest+"="+strings.ReplaceAll(v[0], sg, "sg"))
			}
		}
		slices.Sort(kv)
		sent[r.Params.Get("LaunchTemplateName")] = strings.Join(kv, " ")
	}
	want := map[string]string{
		"joinery/class": "1.AssociatePublicIpAddress=false 1.DeviceIndex=0 1.InterfaceType=interface 1.Ipv4PrefixCount=2 1.NetworkCardIndex=0 1.SecurityGroupId.1=sg " +
			"2.DeviceIndex=1 2.InterfaceType=efa-only 2.NetworkCardIndex=0 2.SecurityGroupId.1=sg " +
			"3.DeviceIndex=0 3.InterfaceType=efa-only 3.NetworkCardIndex=1 3.SecurityGroupId.1=sg",
		"joinery/efa": "1.AssociatePublicIpAddress=false 1.DeviceIndex=0 1.InterfaceType=efa 1.Ipv4PrefixCount=2 1.NetworkCardIndex=0 1.SecurityGroupId.1=sg " +
			"2.AssociatePublicIpAddress=false 2.DeviceIndex=1 2.InterfaceType=efa 2.Ipv4PrefixCount=2 2.NetworkCardIndex=1 2.SecurityGroupId.1=sg",
		"joinery/plain": "1.AssociatePublicIpAddress=false 1.DeviceIndex=0 1.Ipv4PrefixCount=2 1.SecurityGroupId.1=sg",
	}
	for name, w := range want {
		if sent[name] != w {
			t.Errorf("%s sent\n%s\nwant\n%s", name, sent[name], w)
		}
	}
}
