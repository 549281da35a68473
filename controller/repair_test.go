package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/repair"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func repairNode(name, instance string, conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{apiv1.LabelNodePool: "p"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim", Name: "nc-" + name}}},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instance},
		Status: corev1.NodeStatus{Conditions: conds},
	}
}

func TestRepairWatcherGathersConditionsAndStatusChecks(t *testing.T) {
	since := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	kernel := corev1.NodeCondition{Type: "KernelReady", Status: corev1.ConditionFalse, Reason: "ForkFailedOutOfPIDs", LastTransitionTime: metav1.NewTime(since)}
	var claims []*apiv1.NodeClaim
	for _, n := range []string{"a", "b"} {
		claims = append(claims, &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc-" + n, Labels: map[string]string{apiv1.LabelNodePool: "p"}},
			Status: apiv1.NodeClaimStatus{NodeName: n}})
	}
	f := kubetest.Start(t, kubetest.World{Claims: claims, Objects: []runtime.Object{
		repairNode("a", "i-0a", kernel), repairNode("b", "i-0b"), repairNode("not-joinerys", "i-0c")}})
	var answer []aws.ImpairedInstance
	var answerErr error
	calls := 0
	r := newRepairWatcher(f.Cluster, nil, func(context.Context) ([]aws.ImpairedInstance, error) { calls++; return answer, answerErr },
		nil, Config{Tuning: Tuning{RepairInterval: time.Second}}, zap.NewNop())
	now := since.Add(time.Hour)
	r.now = func() time.Time { return now }

	answer = []aws.ImpairedInstance{{ID: "i-0b", Check: "system", Since: since}}
	r.pollStatusChecks(context.Background())
	byName := map[string]repair.Node{}
	for _, n := range r.nodes() {
		byName[n.Name] = n
	}
	if _, ok := byName["not-joinerys"]; ok || len(byName) != 2 {
		t.Fatalf("nodes %v, want a and b (the third has no NodeClaim)", byName)
	}
	if s := byName["a"].Signals; len(s) != 1 || s[0].Type != "KernelReady" || s[0].Status != "False" || !s[0].Since.Equal(since) {
		t.Errorf("a's signals %+v", s)
	}
	if s := byName["b"].Signals; len(s) != 1 || s[0].Type != repair.SignalInstanceStatus || s[0].Status != repair.StatusImpaired || s[0].Reason != "SystemStatusImpaired" {
		t.Errorf("b's signals %+v", s)
	}
	d := repair.Decide(r.nodes(), nil, repair.Settings{MaxUnhealthy: repair.DefaultMaxUnhealthy, Policies: r.policies}, now)
	if len(d.Repair) != 1 || len(d.Blocked) != 1 {
		t.Errorf("decision %+v: two unhealthy of two nodes, cap 20%% rounded up: one repaired, one blocked", d)
	}

	// Asked again only after the interval; a refusal drops the signals.
	r.pollStatusChecks(context.Background())
	if calls != 1 {
		t.Errorf("DescribeInstanceStatus asked %d times within the interval, want 1", calls)
	}
	now = now.Add(time.Second)
	answerErr = &smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "not authorized"}
	r.pollStatusChecks(context.Background())
	if !r.unauthorized || len(r.statusSince) != 0 {
		t.Errorf("after a refusal: unauthorized %v, signals %v", r.unauthorized, r.statusSince)
	}
	now = now.Add(time.Second)
	answer, answerErr = nil, errors.New("connection reset")
	r.statusSince = map[string]repair.Signal{"i-0b": {Type: repair.SignalInstanceStatus}}
	r.pollStatusChecks(context.Background())
	if len(r.statusSince) != 1 {
		t.Errorf("a failed call dropped the last answer: %v", r.statusSince)
	}
}

func TestRepairWatcherPoolSettingsFallBackOnBadAnnotations(t *testing.T) {
	f := kubetest.Start(t, kubetest.World{})
	r := newRepairWatcher(f.Cluster, nil, nil, nil, Config{}, zap.NewNop())
	defaults := repair.Settings{MaxUnhealthy: repair.DefaultMaxUnhealthy, Policies: r.policies}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{repair.AnnotationMaxUnhealthy: "lots"}}}
	if s := r.poolSettings(np, defaults); s.Cap(10) != 2 || r.badPool["p"] == "" {
		t.Errorf("bad annotation: cap %d (want the default 2), reported %q", s.Cap(10), r.badPool["p"])
	}
	np.Annotations[repair.AnnotationMaxUnhealthy] = "1"
	if s := r.poolSettings(np, defaults); s.Cap(10) != 1 || r.badPool["p"] != "" {
		t.Errorf("fixed annotation: cap %d, still reported %q", s.Cap(10), r.badPool["p"])
	}
}
