package activities

import (
	"context"
	"testing"
	"time"

	"github.com/joinery/joinery/internal/testwait"
	"github.com/joinery/joinery/policy/sharedstate"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// replica is one worker's shared-state half over a shared fake API server.
func replica(t *testing.T, kc *kubefake.Clientset) *Activities {
	t.Helper()
	state := kube.NewStateStore(kc, "joinery-system")
	a := New(Deps{ICE: aws.NewICECache(time.Minute, nil), State: state, Log: zap.NewNop()})
	a.BindSharedState()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := state.Start(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestICEMarkSharedAndKeptAcrossRestart(t *testing.T) {
	kc := kubefake.NewSimpleClientset()
	a, b := replica(t, kc), replica(t, kc)
	a.Launch.ice.MarkUnavailable("c6a.xlarge", "us-east-1a", "spot")
	if !a.Launch.ice.Unavailable("c6a.xlarge", "us-east-1a", "spot") {
		t.Fatal("the marking replica forgot its mark")
	}
	testwait.Eventually(t, "replica b honours a's mark", 0, func() bool { return b.Launch.ice.Unavailable("c6a.xlarge", "us-east-1a", "spot") })
	if b.Launch.ice.Unavailable("c6a.xlarge", "us-east-1b", "spot") || b.Launch.ice.Len() != 1 {
		t.Errorf("b holds %v", b.Launch.ice.Entries())
	}
	cm, err := kc.CoreV1().ConfigMaps("joinery-system").Get(context.Background(), sharedstate.OfferingCacheConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	until, ok := sharedstate.ParseTime(cm.Data["c6a.xlarge_us-east-1a_spot"])
	if !ok || !until.Equal(a.Launch.ice.Entries()[aws.OfferingKey{InstanceType: "c6a.xlarge", Zone: "us-east-1a", CapacityType: "spot"}]) {
		t.Errorf("ConfigMap holds %v, want a's expiry", cm.Data)
	}
	if cm.Labels[sharedstate.Label] != "true" {
		t.Errorf("labels = %v", cm.Labels)
	}
	// A restarted replica (fresh memory) starts with the mark.
	c := replica(t, kc)
	if !c.Launch.ice.Unavailable("c6a.xlarge", "us-east-1a", "spot") {
		t.Errorf("a restarted replica lost the mark: %v", c.Launch.ice.Entries())
	}
}

func TestPodMemoSharedAndKeptAcrossRestart(t *testing.T) {
	kc := kubefake.NewSimpleClientset()
	a, b := replica(t, kc), replica(t, kc)
	now := time.Now()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: "default", UID: types.UID("uid-huge")}}
	snap := &snapshot{podsByKey: map[string]*corev1.Pod{"default/huge": p}}
	a.Provisioning.rememberOutcome(context.Background(), solver.Plan{Unschedulable: []solver.Unschedulable{{Pod: "default/huge", Reason: "too big"}}}, snap, now)
	testwait.Eventually(t, "replica b sees a's unschedulable pod", 0, func() bool {
		_, ok := b.Ledger().Remembered(sharedstate.KindUnschedulable, "uid-huge")
		return ok
	})
	c := replica(t, kc)
	if at, ok := c.Ledger().Remembered(sharedstate.KindUnschedulable, "uid-huge"); !ok || at.UnixMilli() != now.UnixMilli() {
		t.Errorf("restarted replica: %v %v", at, ok)
	}
	// A NodePool spec change on any replica voids the memo on all.
	b.Ledger().ForgetUnschedulable()
	testwait.Eventually(t, "replica a applies b's forget marker", 0, func() bool {
		_, ok := a.Ledger().Remembered(sharedstate.KindUnschedulable, "uid-huge")
		return !ok
	})
}
