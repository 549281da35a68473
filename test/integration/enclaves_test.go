//go:build integration

package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// TestNitroEnclavesClassLaunchesSupportedTypesOnly: an EC2NodeClass with
// enclaveOptions.enabled and a NodePool allowing types with and without
// Nitro Enclaves support (the controller learns which from the local
// DescribeInstanceTypes NitroEnclavesSupport): the pods run on supported
// types only, launched from templates carrying EnclaveOptions.Enabled=true,
// and the instances run with enclaves. A launch from the class's template
// that forces an unsupported type is refused by the local EC2
// (UnsupportedOperation), not launched.
func TestNitroEnclavesClassLaunchesSupportedTypesOnly(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.NodeClassResync = 2 * time.Second })
	e.applyYAML(t, readTestdata(t, "enclaves-pool.yaml"))
	running := func() []simec2.Instance {
		var out []simec2.Instance
		for _, i := range e.w.EC2.Instances() {
			if i.Tags[apiv1.TagNodePool] == "enclaves" && i.State == "running" {
				out = append(out, i)
			}
		}
		return out
	}
	waitFor(t, 3*time.Minute, "both enclave-app pods Running", func() bool {
		n, _ := e.readyPods("app=enclave-app")
		return n == 2 && len(running()) > 0
	})
	insts := running()
	for _, in := range insts {
		lt, _ := e.w.EC2.LaunchTemplate(in.LaunchTemplateID)
		if in.InstanceType != "m5.xlarge" || !in.EnclavesEnabled || !lt.Data.EnclavesEnabled {
			t.Errorf("instance %s is a %s with enclaves %v from a template with %v: want m5.xlarge, enabled", in.ID, in.InstanceType,
				in.EnclavesEnabled, lt.Data.EnclavesEnabled)
		}
		t.Logf("launched %s %s with enclaves %v (template %s)", in.ID, in.InstanceType, in.EnclavesEnabled, in.LaunchTemplateName)
	}

	cc, err := aws.New(e.ctx, aws.Options{Endpoint: e.w.EC2Endpoint, ClusterName: "enclaves-override", Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	subnets, err := cc.Subnets(e.ctx, []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}})
	if err != nil || len(subnets) == 0 {
		t.Fatalf("subnets: %v %v", subnets, err)
	}
	before := len(e.w.EC2.Instances())
	_, err = cc.Launch(e.ctx, aws.LaunchRequest{NodeClaim: "enclaves-forced", NodePool: "enclaves", CapacityType: apiv1.CapacityTypeOnDemand,
		InstanceTypes: []string{"t3.xlarge"}, Subnets: subnets[:1], LaunchTemplateName: insts[0].LaunchTemplateName})
	var none *aws.NoLaunchError
	if !errors.As(err, &none) || len(none.Errors) != 1 || none.Errors[0].Code != simec2.CodeUnsupportedOperation ||
		!strings.Contains(none.Errors[0].Message, "'t3.xlarge' does not support Nitro Enclaves") {
		t.Fatalf("t3.xlarge forced from the class's template: %v, want UnsupportedOperation", err)
	}
	if n := len(e.w.EC2.Instances()); n != before {
		t.Errorf("%d instances after the refused launch, want %d", n, before)
	}
	t.Logf("t3.xlarge from %s refused: %s %s", insts[0].LaunchTemplateName, none.Errors[0].Code, none.Errors[0].Message)
}
