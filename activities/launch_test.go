package activities

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"github.com/joinery/joinery/providers/kube/kubetest"
	simec2 "github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// launchWorld is a NodeClaim of a Ready EC2NodeClass over the local EC2.
func launchWorld(t *testing.T) (*Activities, *simec2.Server, workflows.LaunchRequest) {
	t.Helper()
	return launchWorldWith(t, nil)
}

// launchWorldWith is launchWorld with NodePools and Kubernetes objects.
func launchWorldWith(t *testing.T, pools []*apiv1.NodePool, objs ...runtime.Object) (*Activities, *simec2.Server, workflows.LaunchRequest) {
	t.Helper()
	return launchWorldDeps(t, pools, func(*Deps) {}, objs...)
}

// launchWorldDeps is launchWorldWith with opt changing the Deps.
func launchWorldDeps(t *testing.T, pools []*apiv1.NodePool, opt func(*Deps), objs ...runtime.Object) (*Activities, *simec2.Server, workflows.LaunchRequest) {
	t.Helper()
	return launchWorldOpts(t, simec2.Options{BootDelay: 40 * time.Millisecond, TerminateDelay: 40 * time.Millisecond}, aws.Options{}, pools, opt, objs...)
}

// launchWorldOpts is launchWorldDeps over an EC2 endpoint and a client
// with these options.
func launchWorldOpts(t *testing.T, so simec2.Options, co aws.Options, pools []*apiv1.NodePool, opt func(*Deps), objs ...runtime.Object) (*Activities, *simec2.Server, workflows.LaunchRequest) {
	t.Helper()
	return launchWorldClass(t, so, co, pools, opt, func(*apiv1.EC2NodeClass, *apiv1.NodeClaim) {}, objs...)
}

// launchWorldClass is launchWorldOpts with edit changing the EC2NodeClass
// and the NodeClaim.
func launchWorldClass(t *testing.T, so simec2.Options, co aws.Options, pools []*apiv1.NodePool, opt func(*Deps),
	edit func(*apiv1.EC2NodeClass, *apiv1.NodeClaim), objs ...runtime.Object) (*Activities, *simec2.Server, workflows.LaunchRequest) {
	t.Helper()
	so.ClusterTag = "production-eks"
	srv := simec2.New(so)
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	co.Endpoint, co.ClusterName, co.MaxBackoff = url, "launch-test", 5*time.Millisecond
	cc, err := aws.New(context.Background(), co)
	if err != nil {
		t.Fatal(err)
	}
	terms := []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}}
	sns, err := cc.Subnets(context.Background(), terms)
	if err != nil || len(sns) == 0 {
		t.Fatalf("subnets %v %v", sns, err)
	}
	img, _, _, _ := srv.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id")
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}, SubnetSelectorTerms: terms},
		Status: apiv1.EC2NodeClassStatus{
			AMIs: []apiv1.AMIStatus{{ID: img, Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
			SecurityGroups:  []apiv1.SecurityGroupStatus{{ID: srv.SecurityGroupIDs()[0]}},
			InstanceProfile: "launch-test-profile",
			Conditions:      []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Ready"}},
		}}
	for _, s := range sns {
		cls.Status.Subnets = append(cls.Status.Subnets, apiv1.SubnetStatus{ID: s.ID, Zone: s.Zone})
	}
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-l4nch", Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"}},
		Spec: apiv1.NodeClaimSpec{NodeClassRef: &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}}}
	edit(cls, nc)
	a := newFake(t, kubetest.World{Pools: pools, Claims: []*apiv1.NodeClaim{nc}, Classes: []*apiv1.EC2NodeClass{cls}, Objects: objs}, func(d *Deps) {
		d.Cloud = cc
		d.ClusterFacts = bootstrap.Cluster{Name: "launch-test", Endpoint: "https://127.0.0.1:6443", CABundle: "Y2E=", ServiceCIDR: "10.100.0.0/16"}
		opt(d)
	})
	req := workflows.LaunchRequest{NodeClaim: nc.Name, NodePool: "general-purpose", CapacityType: apiv1.CapacityTypeOnDemand,
		Offerings: []saga.Offering{{InstanceType: "m5.large", Zone: sns[0].Zone, CapacityType: apiv1.CapacityTypeOnDemand}}}
	return a, srv, req
}

// launchAttempt runs LaunchInstance as one attempt of the activity,
// starting from the progress an earlier one heartbeated (nil: the first),
// and returns its result, the progress of its last heartbeat and the EC2
// calls it made.
func launchAttempt(t *testing.T, a *Activities, srv *simec2.Server, req workflows.LaunchRequest, progress *launchProgress) (workflows.Instance, *launchProgress, map[string]int, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	rec := &heartbeats{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	env.RegisterActivityWithOptions(a.Launch.LaunchInstance, activity.RegisterOptions{Name: workflows.ActivityLaunchInstance})
	if progress != nil {
		env.SetHeartbeatDetails(*progress)
	}
	before := maps.Clone(srv.Calls())
	v, err := env.ExecuteActivity(workflows.ActivityLaunchInstance, req)
	calls := map[string]int{}
	for k, n := range srv.Calls() {
		if d := n - before[k]; d > 0 {
			calls[k] = d
		}
	}
	var out workflows.Instance
	if err == nil {
		err = v.Get(&out)
	}
	return out, rec.lastProgress(), calls, err
}

// heartbeats records the details of an activity's heartbeats as it makes
// them (the test environment, like a worker, batches what it sends).
type heartbeats struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	last []interface{}
}

func (h *heartbeats) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &heartbeatsIn{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, h: h}
}

func (h *heartbeats) lastProgress() *launchProgress {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.last) == 1 {
		if p, ok := h.last[0].(launchProgress); ok {
			return &p
		}
	}
	return nil
}

type heartbeatsIn struct {
	interceptor.ActivityInboundInterceptorBase
	h *heartbeats
}

func (i *heartbeatsIn) Init(out interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&heartbeatsOut{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: out}, h: i.h})
}

type heartbeatsOut struct {
	interceptor.ActivityOutboundInterceptorBase
	h *heartbeats
}

func (o *heartbeatsOut) RecordHeartbeat(ctx context.Context, details ...interface{}) {
	o.h.mu.Lock()
	o.h.last = details
	o.h.mu.Unlock()
	o.Next.RecordHeartbeat(ctx, details...)
}

// restart gives the launch activity the memory of a restarted worker:
// no template or subnet cache, an EC2 client that launched no batch.
func restart(t *testing.T, a *Activities) {
	t.Helper()
	cloud, err := a.Launch.cloud.Restarted(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.Launch.cloud = cloud
	a.Launch.templates.forget()
	a.Launch.subnets = subnetPicker{}
}

// A retried launch resumes from the plan its earlier attempt heartbeated:
// one CreateFleet, with that attempt's client token, so the instance it
// launched is the one returned and no second is bought.
func TestLaunchResumesFromHeartbeatedPlan(t *testing.T) {
	a, srv, req := launchWorld(t)
	first, details, calls, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if details == nil || details.Plan == nil || details.Calling {
		t.Fatalf("the first attempt heartbeated %+v: want its plan, and its CreateFleet answered (not Calling)", details)
	}
	lp := *details.Plan
	if calls["CreateFleet"] != 1 || calls["CreateLaunchTemplate"] != 1 || calls["DescribeInstances"] != 0 {
		t.Fatalf("first attempt's EC2 calls %v: want a template and one CreateFleet, no lookup", calls)
	}
	if len(lp.Configs) != 1 || len(lp.Configs[0].Overrides) != 1 ||
		lp.Configs[0].Overrides[0].InstanceType != "m5.large" || lp.Subnet[req.Offerings[0].Zone] == "" {
		t.Fatalf("heartbeated plan %+v", lp)
	}

	// The worker died after CreateFleet, before the result was recorded.
	restart(t, a)
	again, _, calls, err := launchAttempt(t, a, srv, req, details)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"CreateFleet": 1}; !maps.Equal(calls, want) {
		t.Fatalf("resumed attempt's EC2 calls %v, want %v", calls, want)
	}
	if again.ID != first.ID || again.SubnetID != first.SubnetID || again.ImageID == "" {
		t.Fatalf("resumed attempt returned %+v, the first launched %+v", again, first)
	}
	if n := len(srv.Instances()); n != 1 {
		t.Fatalf("%d instances after a resumed launch, want 1", n)
	}
}

// A plan whose template is gone is dropped: that attempt fails, and the
// next one makes its templates again.
func TestLaunchDropsAPlanWhoseTemplateIsGone(t *testing.T) {
	a, srv, req := launchWorld(t)
	lp := launchPlan{Configs: []aws.LaunchConfig{{LaunchTemplateName: "joinery/deleted",
		Overrides: []aws.LaunchOverride{{InstanceType: "m5.large", SubnetID: srv.SubnetIDs()[0], Zone: req.Offerings[0].Zone}}}}}
	_, details, calls, err := launchAttempt(t, a, srv, req, &launchProgress{Plan: &lp})
	if err == nil || !strings.Contains(err.Error(), "InvalidLaunchTemplateName.NotFoundException") {
		t.Fatalf("launch from a deleted template: %v (EC2 calls %v)", err, calls)
	}
	if details == nil || details.Plan != nil || len(details.Templates) != 0 {
		t.Fatalf("the failed attempt still heartbeats the stale plan %+v", details)
	}
	if calls["CreateLaunchTemplate"] != 0 {
		t.Fatalf("the resumed attempt made templates %v", calls)
	}
	if _, _, _, err := launchAttempt(t, a, srv, req, nil); err != nil {
		t.Fatalf("next attempt: %v", err)
	}
}

// An attempt whose worker died after it chose subnets and made its
// template, and after CreateFleet, before it carried the plan, leaves the
// subnets and template to the next attempt: on a fresh worker (empty
// caches) that one plans the same launch without resolving subnets or
// templates again, and its CreateFleet, with the same client token, gets
// back the instance the dead attempt launched; no lookup, no second
// instance.
func TestLaunchResumesEachStepsProgress(t *testing.T) {
	a, srv, req := launchWorld(t)
	first, details, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if details == nil || len(details.Subnets) == 0 || len(details.Templates) != 1 {
		t.Fatalf("first attempt's progress %+v: want its subnets and its one template", details)
	}
	partial := launchProgress{Subnets: details.Subnets, Templates: details.Templates}
	restart(t, a)
	inst, after, calls, err := launchAttempt(t, a, srv, req, &partial)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"CreateFleet": 1}; !maps.Equal(calls, want) {
		t.Fatalf("resumed attempt's EC2 calls %v, want %v", calls, want)
	}
	if inst.ID != first.ID || inst.SubnetID != details.Subnets[req.Offerings[0].Zone] || len(srv.Instances()) != 1 {
		t.Fatalf("resumed attempt launched %s in %s (first %s; %d instances)", inst.ID, inst.SubnetID, first.ID, len(srv.Instances()))
	}
	if after == nil || after.Plan == nil || !slices.Equal(after.Templates, details.Templates) {
		t.Fatalf("resumed attempt's progress %+v", after)
	}
}

// A NodeClaim deleted while its launch's worker died after CreateFleet
// answered (a gang's compensation, a user): the retry finds the instance
// that attempt launched and returns it, so the saga terminates it; it
// buys no other.
func TestLaunchOfADeletedNodeClaimReturnsTheInstanceItLaunched(t *testing.T) {
	a, srv, req := launchWorld(t)
	first, details, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cluster().Dynamic.Resource(apiv1.NodeClaimGVR).Delete(context.Background(), req.NodeClaim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, _, calls, err := launchAttempt(t, a, srv, req, details)
	if err != nil {
		t.Fatalf("retry after the deletion: %v", err)
	}
	if again.ID != first.ID || calls["CreateFleet"] != 0 {
		t.Fatalf("retry returned %s with EC2 calls %v; want %s and no CreateFleet", again.ID, calls, first.ID)
	}
	if n := len(srv.Instances()); n != 1 {
		t.Fatalf("%d instances, want 1", n)
	}
}

// spec.cpuOptions reaches the launch template, and with nested
// virtualization enabled the launch keeps to the types that support it: an
// offering planned before the class enabled it is left out with the reason
// (Karpenter's compatibility check), the instance runs with it.
func TestLaunchCarriesCPUOptions(t *testing.T) {
	enabled := apiv1.NestedVirtualizationEnabled
	a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
		func(cls *apiv1.EC2NodeClass, _ *apiv1.NodeClaim) {
			cls.Spec.CPUOptions = &apiv1.CPUOptions{NestedVirtualization: &enabled}
		})
	m5 := req.Offerings[0]
	only := req
	only.Offerings = []saga.Offering{m5}
	if _, _, _, err := launchAttempt(t, a, srv, only, nil); err == nil || !strings.Contains(err.Error(), "m5.large: does not support nested virtualization") {
		t.Fatalf("m5.large alone: %v, want it left out for nested virtualization", err)
	}
	m8i := m5
	m8i.InstanceType = "m8i.large"
	req.Offerings = append(req.Offerings, m8i)
	out, _, _, err := launchAttempt(t, a, srv, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := srv.Instance(out.ID)
	lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
	if inst.InstanceType != "m8i.large" || inst.NestedVirtualization != enabled || lt.Data.NestedVirtualization != enabled {
		t.Errorf("launched %s with nested virtualization %q from a template with %q, want m8i.large, enabled", inst.InstanceType, inst.NestedVirtualization, lt.Data.NestedVirtualization)
	}
}

// The class's launch fields reach the launch template and CreateFleet:
// detailed monitoring, the public IP choice and Context, which a NodeClaim
// whose minValues were relaxed launches without (as Karpenter's does).
func TestLaunchCarriesTheClassLaunchFields(t *testing.T) {
	for _, relaxed := range []bool{false, true} {
		no, ctxID := false, "c-0123"
		a, srv, req := launchWorldClass(t, simec2.Options{BootDelay: 40 * time.Millisecond}, aws.Options{}, nil, func(*Deps) {},
			func(cls *apiv1.EC2NodeClass, nc *apiv1.NodeClaim) {
				yes := true
				cls.Spec.DetailedMonitoring, cls.Spec.AssociatePublicIPAddress, cls.Spec.Context = &yes, &no, &ctxID
				if relaxed {
					nc.Annotations = map[string]string{apiv1.AnnotationNodeClaimMinValuesRelaxed: "true"}
				}
			})
		srv.SetRecording(true)
		out, _, _, err := launchAttempt(t, a, srv, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := srv.Instance(out.ID)
		lt, _ := srv.LaunchTemplate(inst.LaunchTemplateID)
		if !lt.Data.DetailedMonitoring || lt.Data.AssociatePublicIPAddress == nil || *lt.Data.AssociatePublicIPAddress ||
			!inst.DetailedMonitoring || inst.PublicIP != "" {
			t.Errorf("template %+v, instance monitoring %v public IP %q", lt.Data, inst.DetailedMonitoring, inst.PublicIP)
		}
		want := ctxID
		if relaxed {
			want = ""
		}
		for _, r := range srv.Requests() {
			if r.Action == "CreateFleet" && r.Params.Get("Context") != want {
				t.Errorf("minValues relaxed %v: CreateFleet Context %q, want %q", relaxed, r.Params.Get("Context"), want)
			}
		}
	}
}
