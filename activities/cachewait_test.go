package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A NodeClaim written through the API is waited for until the informer
// holds it; one that never arrives fails with its name.
func TestWaitNodeClaimsCached(t *testing.T) {
	a := newFake(t, kubetest.World{})
	ctx := context.Background()
	nc := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x7k2p"}}
	if err := a.cluster().CreateNodeClaim(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := a.cluster().WaitNodeClaimsCached(ctx, []string{"general-purpose-x7k2p"}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(a.cluster().NodeClaims()) != 1 {
		t.Fatalf("cache holds %d NodeClaims after the wait, want 1", len(a.cluster().NodeClaims()))
	}
	err := a.cluster().WaitNodeClaimsCached(ctx, []string{"general-purpose-x7k2p", "general-purpose-never"}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "general-purpose-never") {
		t.Fatalf("err %v, want one naming general-purpose-never", err)
	}
}
