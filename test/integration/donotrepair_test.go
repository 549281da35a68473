//go:build integration

package integration

import (
	"errors"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/api/serviceerror"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// karpenter.sh/do-not-repair on a Node holds its repair back (a
// NodeRepairBlocked Event says why, in the pass that would have started
// the repair); taking the annotation off lets the repair run.
func TestDoNotRepairHoldsAnImpairedNode(t *testing.T) {
	e, nodeName := startSteadyRepairEnv(t)
	e.annotateNode(t, nodeName, `{"metadata":{"annotations":{"`+apiv1.AnnotationDoNotRepair+`":"true"}}}`)
	fault, err := e.w.SimulateNodeFault(e.ctx, world.NodeFaultRequest{Node: nodeName, Kind: world.FaultImpaired})
	if err != nil {
		t.Fatal(err)
	}
	e.expectEvent(t, nodeName, workflows.EventNodeRepairBlocked, `repair is blocked through the "karpenter.sh/do-not-repair" annotation`)
	var notFound *serviceerror.NotFound
	if _, err := e.tc.DescribeWorkflowExecution(e.ctx, workflows.RepairWorkflowID(nodeName), ""); err == nil || !errors.As(err, &notFound) {
		t.Fatalf("repair/%s: %v, want no such workflow while the node says do-not-repair", nodeName, err)
	}
	if in, ok := e.w.EC2.Instance(fault.InstanceID); !ok || in.State != ec2.StateRunning {
		t.Fatalf("instance %s of the held node: %+v", fault.InstanceID, in)
	}
	e.annotateNode(t, nodeName, `{"metadata":{"annotations":{"`+apiv1.AnnotationDoNotRepair+`":null}}}`)
	waitFor(t, 2*time.Minute, "the impaired instance terminated once the annotation is gone", func() bool {
		in, ok := e.w.EC2.Instance(fault.InstanceID)
		return !ok || in.State == ec2.StateTerminated
	})
}

func (e *env) annotateNode(t *testing.T, name, patch string) {
	t.Helper()
	if _, err := e.kc.CoreV1().Nodes().Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
