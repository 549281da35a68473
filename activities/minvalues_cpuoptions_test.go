package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// A NodeClaim planned before its class enabled nested virtualization: the
// minValues widening counts and adds only the types that support it, so
// CreateFleet gets as many families of them as minValues asks and nothing
// else (Karpenter's compatibility check drops the others before launch).
func TestLaunchMinValuesKeepsToNestedVirtualizationTypes(t *testing.T) {
	a, srv, _ := launchWorld(t)
	lr, _ := plannedLaunch(t, a, minValuesPool(3))
	ctx := context.Background()
	patch := []byte(`{"spec":{"cpuOptions":{"nestedVirtualization":"enabled"}}}`)
	if _, err := a.cluster().Dynamic.Resource(apiv1.EC2NodeClassGVR).Patch(ctx, "default", ktypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cls, err := a.cluster().NodeClass("default")
		if err == nil && cls.Spec.WantsNestedVirtualization() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the class never showed nested virtualization enabled: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.SetRecording(true)
	inst, _, _, err := launchAttempt(t, a, srv, lr, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fleetFamilies(t, srv)
	for _, f := range got {
		if !strings.Contains(f, "8i") {
			t.Errorf("CreateFleet sent family %s, which does not support nested virtualization", f)
		}
	}
	if len(got) < 3 || !strings.Contains(inst.InstanceType, "8i") {
		t.Errorf("CreateFleet families %v, launched %s: want at least 3 nested virtualization families", got, inst.InstanceType)
	}
	t.Logf("saga offerings %d; CreateFleet families %v; launched %s", len(lr.Offerings), got, inst.InstanceType)
}
