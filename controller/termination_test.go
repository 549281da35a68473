package controller

import (
	"context"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/kube/kubetest"
	"github.com/joinery/joinery/workflows"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A deleted Node's NodeClaim is deleted before its saga is signalled, as
// Karpenter's node termination does first; a deleted NodeClaim's notice
// only signals (its Node is the saga's to delete).
func TestDeletedNodeDeletesItsNodeClaimAtOnce(t *testing.T) {
	claim := func(name string) *apiv1.NodeClaim {
		return &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{apiv1.FinalizerTermination}}}
	}
	f := kubetest.New(t, kubetest.World{Claims: []*apiv1.NodeClaim{claim("of-node"), claim("own")}})
	tc := &mocks.Client{}
	var signalled []string
	tc.On("SignalWorkflow", mock.Anything, mock.Anything, "", workflows.SignalDeleted, mock.Anything).
		Run(func(a mock.Arguments) {
			gone := func(name string) bool {
				_, err := f.NodeClaim(context.Background(), name)
				return apierrors.IsNotFound(err)
			}
			signalled = append(signalled, a.Get(1).(string))
			if id := a.Get(1).(string); id == workflows.NodeClaimWorkflowID("of-node") && !gone("of-node") {
				t.Errorf("%s signalled before the deleted Node's NodeClaim was deleted", id)
			}
		}).Return(nil)
	d := newDeletionWatch(f.Cluster, tc, false, zap.NewNop())
	at := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	for _, n := range []workflows.DeletionNotice{
		{Object: workflows.ObjectNode, Name: "ip-1", NodeClaim: "of-node", At: at},
		{Object: workflows.ObjectNodeClaim, Name: "own", NodeClaim: "own", At: at},
	} {
		if err := d.handle(context.Background(), n); err != nil {
			t.Fatalf("%s: %v", n.NodeClaim, err)
		}
	}
	if _, err := f.NodeClaim(context.Background(), "of-node"); !apierrors.IsNotFound(err) {
		t.Errorf("NodeClaim of the deleted Node not deleted: %v", err)
	}
	if _, err := f.NodeClaim(context.Background(), "own"); err != nil {
		t.Errorf("NodeClaim own: %v; the watch deletes no NodeClaim whose own deletion it saw (the API server has)", err)
	}
	if len(signalled) != 2 {
		t.Errorf("signalled %v, want both sagas", signalled)
	}
}
