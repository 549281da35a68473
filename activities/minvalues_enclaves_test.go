package activities

import (
	"context"
	"sort"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	simec2 "github.com/joinery/joinery/sim/ec2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// A NodeClaim planned before its class enabled Nitro Enclaves: the
// minValues widening counts and adds only the types that support them, so
// CreateFleet gets as many families of them as minValues asks and no type
// without support (Karpenter's nitroEnclavesCompatibility).
func TestLaunchMinValuesKeepsToNitroEnclavesTypes(t *testing.T) {
	a, srv, _ := launchWorld(t)
	lr, _ := plannedLaunch(t, a, minValuesPool(3))
	ctx := context.Background()
	patch := []byte(`{"spec":{"enclaveOptions":{"enabled":true}}}`)
	if _, err := a.cluster().Dynamic.Resource(apiv1.EC2NodeClassGVR).Patch(ctx, "default", ktypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cls, err := a.cluster().NodeClass("default")
		if err == nil && cls.Spec.WantsEnclaves() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the class never showed enclaves enabled: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.SetRecording(true)
	inst, _, _, err := launchAttempt(t, a, srv, lr, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.MustDefault()
	for _, name := range fleetTypes(srv) {
		if it, ok := cat.Get(name); !ok || !it.NitroEnclaves {
			t.Errorf("CreateFleet sent %s, which does not support Nitro Enclaves", name)
		}
	}
	launched, _ := srv.Instance(inst.ID)
	if got := fleetFamilies(t, srv); len(got) < 3 || !launched.EnclavesEnabled {
		t.Errorf("CreateFleet families %v, launched %s with enclaves %v: want at least 3 families, enabled", got, inst.InstanceType, launched.EnclavesEnabled)
	}
	t.Logf("saga offerings %d; CreateFleet types %v; launched %s", len(lr.Offerings), fleetTypes(srv), inst.InstanceType)
}

// fleetTypes are the instance types of the recorded CreateFleet overrides.
func fleetTypes(srv *simec2.Server) []string {
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		for k, vs := range r.Params {
			if r.Action == "CreateFleet" && overrideType.MatchString(k) {
				seen[vs[0]] = true
			}
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
