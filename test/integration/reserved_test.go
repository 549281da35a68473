//go:build integration

package integration

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/sim/ec2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A capacity reservation of 3 m5.large in us-east-1a is used first: the
// EC2NodeClass resolves it into status.capacityReservations, the first 3
// pods' NodeClaims say capacity type reserved with the reservation's id and
// launch with CreateFleet from a template that targets it (on-demand
// capacity, capacity-reservations-only); once it is used up, the next pods'
// nodes are spot or on-demand, outside it. Then a second reservation whose
// count in the class's status is stale (another team took one of its 2
// instances after the class read it): the second NodeClaim planned on it
// is refused by EC2 (ReservationCapacityExceeded), the reservation counts
// as used up (as Karpenter marks the reservation id; the reserved offering
// stays out of the shared ICE cache) and that NodeClaim falls back to spot
// or on-demand.
func TestReservedCapacityIsUsedFirst(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	cr, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 3,
		Tags: map[string]string{"joinery.sh/purpose": "reserved-test"}})
	if err != nil {
		t.Fatal(err)
	}
	// Resolved on each change of the class only: the status count stays
	// what EC2 said then (the second reservation's goes stale on purpose).
	e.runControllerLogged(t, func(c *controller.Config) { c.NodeClassResync = time.Hour })
	recordWorkerIAM(t, e, "reserved") // reserved launches: ec2:RunInstances on the reservation
	e.w.EC2.SetRecording(true)
	e.applyWithDefaultClass(t, "testdata/reserved.yaml")
	dc := dynamicClient(t, e)
	waitFor(t, time.Minute, "the reservation in the class's status", func() bool {
		cls := getNodeClass(t, e, dc, "reserved")
		return len(cls.Status.CapacityReservations) == 1 && apiv1.IsConditionTrue(cls.Status.Conditions, apiv1.ConditionReady)
	})
	st := getNodeClass(t, e, dc, "reserved").Status.CapacityReservations[0]
	if st.ID != cr.ID || st.InstanceType != "m5.large" || st.AvailabilityZone != "us-east-1a" || st.InstanceMatchCriteria != "targeted" ||
		st.OwnerID != "123456789012" || st.AvailableInstanceCount == nil || *st.AvailableInstanceCount != 3 {
		t.Fatalf("status.capacityReservations[0] = %+v, want %s (m5.large, us-east-1a, targeted, 3 available)", st, cr.ID)
	}

	// The counts below are of launches, not of EC2's refusals while the
	// class's new instance profile propagates (a test of its own:
	// TestNewInstanceProfileIsWaitedForNotInsufficientCapacity).
	profile := getNodeClass(t, e, dc, "reserved").Status.InstanceProfile
	waitFor(t, time.Minute, "the class's instance profile known to EC2", func() bool {
		_, ok := e.w.IAM.InstanceProfileARN(profile)
		return ok && e.w.IAM.InstanceProfileHasRole(profile)
	})

	objs := readManifests(t, "testdata/reserved-app.yaml")
	e.apply(t, objs)
	waitFor(t, 3*time.Minute, "3 reserved-app pods Ready", func() bool { n, _ := e.readyPods("app=reserved-app"); return n == 3 })
	first := e.poolClaims(t, "reserved")
	if len(first) != 3 {
		t.Fatalf("%d NodeClaims for 3 pods, want 3", len(first))
	}
	for _, nc := range first {
		t.Logf("first: %s %s %s %s %s", nc.Name, nc.Labels[apiv1.LabelInstanceType], nc.Labels[apiv1.LabelZone],
			nc.Labels[apiv1.LabelCapacityType], nc.Labels[apiv1.LabelCapacityReservationID])
		if nc.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeReserved || nc.Labels[apiv1.LabelCapacityReservationID] != cr.ID ||
			nc.Labels[apiv1.LabelZone] != "us-east-1a" || nc.Labels[apiv1.LabelInstanceType] != "m5.large" {
			t.Errorf("NodeClaim %s: labels %v, want m5.large reserved in us-east-1a, reservation %s", nc.Name, nc.Labels, cr.ID)
		}
		node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Node %s of %s: %v", nc.Status.NodeName, nc.Name, err)
		} else if node.Labels[apiv1.LabelCapacityType] != apiv1.CapacityTypeReserved || node.Labels[apiv1.LabelCapacityReservationID] != cr.ID {
			t.Errorf("Node %s of %s: labels %v, want reserved in %s", node.Name, nc.Name, node.Labels, cr.ID)
		}
	}
	if got := e.w.EC2.CapacityReservations()[0].AvailableInstanceCount; got != 0 {
		t.Errorf("the reservation has %d instances available after 3 reserved launches, want 0", got)
	}

	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "reserved-app", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "5 reserved-app pods Ready", func() bool { n, _ := e.readyPods("app=reserved-app"); return n == 5 })
	all := e.poolClaims(t, "reserved")
	if len(all) != 5 {
		t.Fatalf("%d NodeClaims for 5 pods, want 5", len(all))
	}
	reserved, other := 0, 0
	for _, nc := range all {
		switch ct := nc.Labels[apiv1.LabelCapacityType]; ct {
		case apiv1.CapacityTypeReserved:
			reserved++
		case apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand:
			other++
			if id := nc.Labels[apiv1.LabelCapacityReservationID]; id != "" {
				t.Errorf("NodeClaim %s is %s but names reservation %s", nc.Name, ct, id)
			}
			t.Logf("next: %s %s %s %s", nc.Name, nc.Labels[apiv1.LabelInstanceType], nc.Labels[apiv1.LabelZone], ct)
		default:
			t.Errorf("NodeClaim %s: capacity type %q", nc.Name, ct)
		}
	}
	if reserved != 3 || other != 2 {
		t.Errorf("%d reserved and %d spot/on-demand NodeClaims, want 3 and 2", reserved, other)
	}

	cr2, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1b", TotalInstanceCount: 2,
		Tags: map[string]string{"joinery.sh/purpose": "reserved-test"}})
	if err != nil {
		t.Fatal(err)
	}
	touch := []byte(`{"metadata":{"annotations":{"test.joinery.sh/touch":"1"}}}`)
	if _, err := dc.Resource(apiv1.EC2NodeClassGVR).Patch(e.ctx, "reserved", types.MergePatchType, touch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the second reservation in the class's status", func() bool {
		rs := getNodeClass(t, e, dc, "reserved").Status.CapacityReservations
		return len(rs) == 2 && rs[0].ID == min(cr.ID, cr2.ID) && rs[1].ID == max(cr.ID, cr2.ID)
	})
	// Another team takes one of its two slots; EC2's described count still
	// says 2 (it catches up later), so Joinery plans 2 into it and learns
	// otherwise from the refusal.
	if err := e.w.EC2.SetReservationHeld(cr2.ID, 1, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	scale = []byte(`{"spec":{"replicas":7}}`)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "reserved-app", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "7 reserved-app pods Ready", func() bool { n, _ := e.readyPods("app=reserved-app"); return n == 7 })
	byReservation := map[string]int{}
	for _, nc := range e.poolClaims(t, "reserved") {
		byReservation[nc.Labels[apiv1.LabelCapacityReservationID]]++
		if (nc.Labels[apiv1.LabelCapacityReservationID] != "") != (nc.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeReserved) {
			t.Errorf("NodeClaim %s: capacity type %s, reservation %q", nc.Name, nc.Labels[apiv1.LabelCapacityType], nc.Labels[apiv1.LabelCapacityReservationID])
		}
	}
	t.Logf("NodeClaims by reservation after the stale count: %v", byReservation)
	if byReservation[cr.ID] != 3 || byReservation[cr2.ID] != 1 || byReservation[""] != 3 {
		t.Errorf("NodeClaims by reservation %v, want 3 in %s, 1 in %s, 3 in none", byReservation, cr.ID, cr2.ID)
	}
	cm, err := e.kc.CoreV1().ConfigMaps("default").Get(e.ctx, sharedstate.OfferingCacheConfigMap, metav1.GetOptions{})
	if (err != nil && !apierrors.IsNotFound(err)) || (err == nil && cm.Data["m5.large_us-east-1b_reserved"] != "") {
		t.Errorf("shared ICE cache: %v, data %v; want no m5.large_us-east-1b_reserved (the reservation is out, not the offering)", err, cmData(cm))
	}

	// The CreateFleet requests EC2 answered: 3 from a template that
	// targets the first reservation (on-demand capacity), 2 targeting the
	// second (one refused), 3 outside any reservation. A request refused
	// whole (EC2 did not show a template made a moment ago yet) launched
	// nothing, and its retry may join another batch under another token:
	// it does not count. A request repeated with its client token counts
	// once; a CreateFleet shared by several NodeClaims counts its target
	// capacity.
	var targeted, targeted2, outside int
	var fleets []string
	tokens := map[string]bool{}
	for _, r := range e.w.EC2.Requests() {
		if r.Action != "CreateFleet" {
			continue
		}
		name := r.Params.Get("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName")
		fleets = append(fleets, fmt.Sprintf("%s token %s template %s capacity %s %s, refused %q", r.Time.Format("15:04:05.000"), r.Params.Get("ClientToken"),
			name, r.Params.Get("TargetCapacitySpecification.TotalTargetCapacity"), r.Params.Get("TargetCapacitySpecification.DefaultTargetCapacityType"), r.ErrorCode))
		if r.ErrorCode != "" || tokens[r.Params.Get("ClientToken")] {
			continue
		}
		tokens[r.Params.Get("ClientToken")] = true
		lt, ok := e.w.EC2.LaunchTemplate(name)
		if !ok {
			t.Errorf("CreateFleet from unknown template %q", name)
			continue
		}
		ct := r.Params.Get("TargetCapacitySpecification.DefaultTargetCapacityType")
		n, _ := strconv.Atoi(r.Params.Get("TargetCapacitySpecification.TotalTargetCapacity"))
		if lt.Data.CapacityReservationID == cr2.ID {
			targeted2 += n
			continue
		}
		if lt.Data.CapacityReservationID != "" {
			targeted += n
			if lt.Data.CapacityReservationID != cr.ID || lt.Data.CapacityReservationPreference != ec2.PreferenceCapacityReservationsOnly || ct != "on-demand" ||
				r.Params.Get("LaunchTemplateConfigs.1.Overrides.1.InstanceType") != "m5.large" ||
				r.Params.Get("LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone") != "us-east-1a" || r.Params.Get("LaunchTemplateConfigs.2.LaunchTemplateSpecification.LaunchTemplateName") != "" {
				t.Errorf("reserved CreateFleet: template %s (target %s, preference %s), DefaultTargetCapacityType %s, params %v",
					name, lt.Data.CapacityReservationID, lt.Data.CapacityReservationPreference, ct, r.Params)
			}
		} else {
			outside += n
			// The class counts on reservations: its spot and on-demand
			// templates keep out of open ones (preference none).
			if lt.Data.CapacityReservationPreference != ec2.PreferenceNone {
				t.Errorf("CreateFleet outside the reservations from template %s with preference %q, want none", name, lt.Data.CapacityReservationPreference)
			}
		}
	}
	if targeted != 3 || targeted2 != 2 || outside != 3 {
		t.Errorf("CreateFleet: %d targeting the first reservation, %d the second, %d outside them; want 3, 2 (one refused) and 3; requests:\n%s",
			targeted, targeted2, outside, strings.Join(fleets, "\n"))
	}
}

// poolClaims are the pool's NodeClaims, launched (providerID known), by name.
func (e *env) poolClaims(t *testing.T, pool string) []*apiv1.NodeClaim {
	t.Helper()
	var out []*apiv1.NodeClaim
	for _, nc := range e.nodeClaimObjs(t, dynamicClient(t, e)) {
		if nc.Labels[apiv1.LabelNodePool] == pool && nc.Status.ProviderID != "" && nc.DeletionTimestamp == nil {
			out = append(out, nc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func cmData(cm *corev1.ConfigMap) map[string]string {
	if cm == nil {
		return nil
	}
	return cm.Data
}
