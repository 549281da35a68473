package activities

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// minValuesPool is a NodePool of c/m/r amd64 types newer than generation 5
// that asks for minValues distinct instance families.
func minValuesPool(minValues int) *apiv1.NodePool {
	return &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose"},
		Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
			NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
				{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{apiv1.CapacityTypeSpot, apiv1.CapacityTypeOnDemand}},
				{Key: apiv1.LabelInstanceCategory, Operator: apiv1.OpIn, Values: []string{"c", "m", "r"}},
				{Key: apiv1.LabelInstanceGen, Operator: apiv1.OpGt, Values: []string{"5"}},
				{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64"}},
				{Key: apiv1.LabelInstanceFamily, Operator: apiv1.OpExists, MinValues: &minValues},
			},
		}}}}
}

// plannedLaunch solves one pending pod for pool, writes its NodeClaim as
// PlanProvisioning does, and returns the saga's first LaunchRequest (the
// cheapest capacity type's offerings among those it carries).
func plannedLaunch(t *testing.T, a *Activities, np *apiv1.NodePool) (workflows.LaunchRequest, *apiv1.NodeClaim) {
	t.Helper()
	return plannedLaunchOf(t, a, np, solver.Pod{}, false)
}

// plannedLaunchOf is plannedLaunch for a pod with the given node selector
// (pod.NodeSelector; its name and requests are set here), planned under
// MIN_VALUES_POLICY=BestEffort when bestEffort.
func plannedLaunchOf(t *testing.T, a *Activities, np *apiv1.NodePool, pod solver.Pod, bestEffort bool) (workflows.LaunchRequest, *apiv1.NodeClaim) {
	t.Helper()
	ctx := context.Background()
	cls, err := a.cluster().NodeClass("default")
	if err != nil {
		t.Fatal(err)
	}
	pool := solver.NodePoolFromAPI(np, cls, catalog.MustDefault(), zonesOf(cls), a.Launch.ice.Unavailable)
	pool.InstanceTypes = launchable(pool.InstanceTypes, cls)
	req, _ := resources.FromResourceList(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")})
	pod.Namespace, pod.Name, pod.UID, pod.Requests = "default", "web", "u-web", req
	plan := solver.Solve(solver.Input{Pods: []solver.Pod{pod}, NodePools: []solver.NodePool{pool}, Budget: -1, MinValuesBestEffort: bestEffort})
	if len(plan.NewNodeClaims) != 1 {
		t.Fatalf("plan %+v: want one new NodeClaim", plan)
	}
	snap := &snapshot{pools: map[string]*apiv1.NodePool{np.Name: np}, podsByKey: map[string]*corev1.Pod{}}
	nc, in, err := a.Provisioning.claims.write(ctx, snap, "", plan.NewNodeClaims[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cluster().WaitNodeClaimsCached(ctx, []string{nc.Name}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	ct := in.Offerings[0].CapacityType
	lr := workflows.LaunchRequest{NodeClaim: nc.Name, NodePool: np.Name, CapacityType: ct}
	for _, o := range in.Offerings {
		if o.CapacityType == ct {
			lr.Offerings = append(lr.Offerings, o)
		}
	}
	return lr, nc
}

var overrideType = regexp.MustCompile(`^LaunchTemplateConfigs\.\d+\.Overrides\.\d+\.InstanceType$`)

// fleetFamilies are the instance families of the overrides of the
// CreateFleet requests the endpoint received.
func fleetFamilies(t *testing.T, srv *simec2.Server) []string {
	t.Helper()
	seen := map[string]bool{}
	fleets := 0
	for _, r := range srv.Requests() {
		if r.Action != "CreateFleet" {
			continue
		}
		fleets++
		for k, vs := range r.Params {
			if overrideType.MatchString(k) {
				seen[strings.SplitN(vs[0], ".", 2)[0]] = true
			}
		}
	}
	if fleets != 1 {
		t.Fatalf("%d CreateFleet requests, want 1", fleets)
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func families(offs []saga.Offering) map[string]bool {
	out := map[string]bool{}
	for _, o := range offs {
		out[strings.SplitN(o.InstanceType, ".", 2)[0]] = true
	}
	return out
}

// A NodePool asking for minValues: N on instance-family sends CreateFleet
// at least N families: 5 (the saga's offerings, the 20 cheapest, happen to
// show 7 for this pod), and 10, more than those show; the launched
// instance is one of the NodeClaim's types.
func TestLaunchMeetsMinValuesOfInstanceFamily(t *testing.T) {
	for _, minValues := range []int{5, 10} {
		a, srv, _ := launchWorld(t)
		lr, nc := plannedLaunch(t, a, minValuesPool(minValues))
		fromSaga := len(families(lr.Offerings))
		if minValues == 10 && fromSaga >= minValues {
			t.Fatalf("the saga's %d offerings already show %d families: the test proves nothing", len(lr.Offerings), fromSaga)
		}
		var mv *int
		for _, r := range nc.Spec.Requirements {
			if r.Key == apiv1.LabelInstanceFamily {
				mv = r.MinValues
			}
		}
		if mv == nil || *mv != minValues {
			t.Fatalf("NodeClaim requirements %+v lost the family minValues", nc.Spec.Requirements)
		}
		srv.SetRecording(true)
		inst, _, _, err := launchAttempt(t, a, srv, lr, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := fleetFamilies(t, srv)
		if len(got) < minValues {
			t.Fatalf("minValues %d: CreateFleet sent families %v", minValues, got)
		}
		t.Logf("minValues %d: saga offerings %d (%d families, %s); CreateFleet families (%d): %v",
			minValues, len(lr.Offerings), fromSaga, lr.CapacityType, len(got), got)
		var types []string
		for _, r := range nc.Spec.Requirements {
			if r.Key == apiv1.LabelInstanceType {
				types = r.Values
			}
		}
		if !slices.Contains(types, inst.InstanceType) || inst.CapacityType != lr.CapacityType {
			t.Fatalf("launched %s/%s, not among the NodeClaim's %s types", inst.InstanceType, inst.CapacityType, lr.CapacityType)
		}
	}
}

// Without minValues the launch sends the saga's offerings as they are.
func TestLaunchWithoutMinValuesSendsTheSagasOfferings(t *testing.T) {
	a, srv, _ := launchWorld(t)
	np := minValuesPool(1)
	np.Spec.Template.Spec.Requirements[4].MinValues = nil
	lr, _ := plannedLaunch(t, a, np)
	srv.SetRecording(true)
	if _, _, _, err := launchAttempt(t, a, srv, lr, nil); err != nil {
		t.Fatal(err)
	}
	got := fleetFamilies(t, srv)
	want := families(lr.Offerings)
	if len(got) != len(want) {
		t.Fatalf("CreateFleet sent families %v, the saga's offerings have %v", got, want)
	}
	for _, f := range got {
		if !want[f] {
			t.Fatalf("CreateFleet sent family %s the saga's offerings do not have (%v)", f, want)
		}
	}
}

// When the insufficient-capacity cache leaves too few families for
// minValues, the launch fails with ErrInsufficientCapacity over the
// request's offerings, without calling CreateFleet.
func TestLaunchRefusesMinValuesItCannotMeet(t *testing.T) {
	a, srv, _ := launchWorldDeps(t, nil, func(d *Deps) { d.ICE = aws.NewICECache(time.Hour, time.Now) })
	lr, nc := plannedLaunch(t, a, minValuesPool(10))
	keep := families(lr.Offerings)
	cls, _ := a.cluster().NodeClass("default")
	marked := 0
	for _, r := range nc.Spec.Requirements {
		if r.Key != apiv1.LabelInstanceType {
			continue
		}
		for _, name := range r.Values {
			if keep[strings.SplitN(name, ".", 2)[0]] {
				continue
			}
			for _, z := range zonesOf(cls) {
				a.Launch.ice.MarkUnavailable(name, z, lr.CapacityType)
				marked++
			}
		}
	}
	_, _, calls, err := launchAttempt(t, a, srv, lr, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.ErrInsufficientCapacity || !app.NonRetryable() {
		t.Fatalf("launch with %d offerings marked unavailable: %v, want a non-retryable %s", marked, err, workflows.ErrInsufficientCapacity)
	}
	if !strings.Contains(err.Error(), "cannot meet the minValues of karpenter.k8s.aws/instance-family>=10") {
		t.Fatalf("error %q does not name the minValues", err)
	}
	var failed []saga.Offering
	if err := app.Details(&failed); err != nil || len(failed) != len(lr.Offerings) {
		t.Fatalf("error details %v (%v), want the request's %d offerings", failed, err, len(lr.Offerings))
	}
	if calls["CreateFleet"] != 0 {
		t.Fatalf("EC2 calls %v: no CreateFleet may be sent", calls)
	}
}

// MIN_VALUES_POLICY=BestEffort: a pod pinned to one instance family on a
// pool asking minValues 5 families, which Strict refuses, gets a NodeClaim
// whose family minValues is lowered to 1, annotated
// karpenter.sh/nodeclaim-min-values-relaxed=true, and it launches; a
// NodeClaim planned without relaxing says false.
func TestBestEffortRelaxedNodeClaimLaunches(t *testing.T) {
	a, srv, _ := launchWorld(t)
	pinned := solver.Pod{NodeSelector: map[string]string{apiv1.LabelInstanceFamily: "m6i"}}
	lr, nc := plannedLaunchOf(t, a, minValuesPool(5), pinned, true)
	if got := nc.Annotations[apiv1.AnnotationNodeClaimMinValuesRelaxed]; got != "true" {
		t.Errorf("relaxed NodeClaim annotated %q, want true", got)
	}
	relaxed := false
	for _, r := range nc.Spec.Requirements {
		if r.Key == apiv1.LabelInstanceFamily && r.Operator == apiv1.OpExists {
			relaxed = r.MinValues != nil && *r.MinValues == 1
		}
	}
	if !relaxed {
		t.Errorf("requirements %+v: want the pool's family minValues relaxed to 1", nc.Spec.Requirements)
	}
	if inst, _, _, err := launchAttempt(t, a, srv, lr, nil); err != nil || !strings.HasPrefix(inst.InstanceType, "m6i.") {
		t.Fatalf("launch of the relaxed NodeClaim: %+v, %v; want an m6i instance", inst, err)
	}
	_, strict := plannedLaunch(t, a, minValuesPool(5))
	if got := strict.Annotations[apiv1.AnnotationNodeClaimMinValuesRelaxed]; got != "false" {
		t.Errorf("NodeClaim meeting minValues annotated %q, want false", got)
	}
}
