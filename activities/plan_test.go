package activities

import (
	"context"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A retried plan discards the NodeClaims its failed attempt wrote (same
// batch label) and leaves every other NodeClaim alone.
func TestDiscardBatch(t *testing.T) {
	mk := func(name, batch string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{apiv1.LabelNodePool: "general-purpose", LabelProvisionBatch: batch}}}
	}
	a := newFakeActivities(t, []*apiv1.NodeClaim{mk("general-purpose-aaaaa", "b1"), mk("general-purpose-bbbbb", "b1"), mk("general-purpose-ccccc", "b2")})
	if err := a.discardBatch(context.Background(), "b1"); err != nil {
		t.Fatal(err)
	}
	list, err := a.Cluster.Dynamic.Resource(apiv1.NodeClaimGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "general-purpose-ccccc" {
		var names []string
		for _, u := range list.Items {
			names = append(names, u.GetName())
		}
		t.Fatalf("left %v, want only general-purpose-ccccc", names)
	}
	// Outside an activity (first attempt semantics): nothing is discarded.
	if b, err := a.discardEarlierAttempt(context.Background()); b != "" || err != nil {
		t.Fatalf("discardEarlierAttempt outside an activity = %q, %v", b, err)
	}
}
