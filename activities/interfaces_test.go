package activities

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// spec.networkInterfaces reach the launch template as written, the launch
// keeps to the types that take them (m5.large has no EFA: left out with
// the reason), the instance has them, and the user data gives the pods
// the default card's efa-only interface leaves (7 of c5n.9xlarge's 8
// interfaces x 29 + 2).
func TestLaunchCarriesNetworkInterfaces(t *testing.T) {
	nis := []apiv1.NetworkInterface{{InterfaceType: apiv1.InterfaceTypeInterface}, {DeviceIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly}}
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
		func(cls *apiv1.EC2NodeClass, _ *apiv1.NodeClaim) { cls.Spec.NetworkInterfaces = nis })
	m5 := req.Offerings[0]
	only := req
	only.Offerings = []saga.Offering{m5}
	if _, _, _, err := launchAttempt(t, a, srv, only, nil); err == nil || !strings.Contains(err.Error(), "m5.large: takes 0 EFA interfaces, not 1") {
		t.Fatalf("m5.large alone: %v, want it left out for its EFA interfaces", err)
	}
	c5n := m5
	c5n.InstanceType = "c5n.9xlarge"
	req.Offerings = append(req.Offerings, c5n)
	out, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := srv.Instance(out.ID)
	lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
	if inst.InstanceType != "c5n.9xlarge" || len(lt.Data.Interfaces) != 2 || inst.EFAInterfaces() != 1 || inst.NoAddressInterfaces() != 1 {
		t.Fatalf("launched %s with %+v from a template with %+v", inst.InstanceType, inst.Interfaces, lt.Data.Interfaces)
	}
	ud, _ := base64.StdEncoding.DecodeString(lt.Data.UserData)
	if !strings.Contains(string(ud), "maxPods: 205") {
		t.Errorf("user data without maxPods 205:\n%s", ud)
	}
}

// A NodeClaim requesting vpc.amazonaws.com/efa from a class without
// interfaces launches with the type's EFA interfaces, as Karpenter's
// (one efa interface on c5n.9xlarge), and no maxPods of its own.
func TestLaunchForEFARequests(t *testing.T) {
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
		func(_ *apiv1.EC2NodeClass, nc *apiv1.NodeClaim) {
			nc.Spec.Resources.Requests = corev1.ResourceList{"vpc.amazonaws.com/efa": resource.MustParse("1")}
		})
	req.Offerings[0].InstanceType = "c5n.9xlarge"
	out, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := srv.Instance(out.ID)
	lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
	if len(lt.Data.Interfaces) != 1 || lt.Data.Interfaces[0].Type != simec2.InterfaceTypeEFA || inst.EFAInterfaces() != 1 {
		t.Fatalf("template interfaces %+v, instance %+v", lt.Data.Interfaces, inst.Interfaces)
	}
	if ud, _ := base64.StdEncoding.DecodeString(lt.Data.UserData); strings.Contains(string(ud), "maxPods") {
		t.Errorf("user data with maxPods:\n%s", ud)
	}
}
