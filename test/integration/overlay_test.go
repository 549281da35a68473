//go:build integration

package integration

import (
	"math"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/workflows"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

// With --feature-gates NodeOverlay=true a -30% NodeOverlay on m5 makes the
// pod's node an m5.large (c5.large at list prices), launched at the
// overlaid price; the conflicting overlay says so in its status.
func TestNodeOverlayMovesTheLaunch(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) { c.FeatureGates.NodeOverlay = true })
	e.applyWithDefaultClass(t, "testdata/overlay.yaml")
	_, price := e.marketNode(t, "overlaid")
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=overlaid"})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes of pool overlaid: %v %v", nodes, err)
	}
	it := nodes.Items[0].Labels[apiv1.LabelInstanceType]
	m5, _ := catalog.MustDefault().Get("m5.large")
	t.Logf("overlaid: %s at %.4f USD/hour (list %.4f)", it, price, m5.OnDemandPrice)
	if it != "m5.large" || math.Abs(price-m5.OnDemandPrice*0.7) > 1e-9 {
		t.Errorf("node %s at %.4f, want m5.large at %.4f (30%% off %.4f; c5.large is 0.085)", it, price, m5.OnDemandPrice*0.7, m5.OnDemandPrice)
	}
	// starter status's figures: the node after overlays and at list price.
	var st workflows.ConsolidationStatus
	waitFor(t, time.Minute, "the consolidation pass to price the node", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil && st.ListUSDPerHour > 0
	})
	if math.Abs(st.USDPerHour-m5.OnDemandPrice*0.7) > 1e-9 || math.Abs(st.ListUSDPerHour-m5.OnDemandPrice) > 1e-9 {
		t.Errorf("status: %.4f USD/h after overlays, %.4f at list; want %.4f and %.4f", st.USDPerHour, st.ListUSDPerHour, m5.OnDemandPrice*0.7, m5.OnDemandPrice)
	}
	dyn := dynamic.NewForConfigOrDie(e.w.Kube.RESTConfig())
	waitFor(t, time.Minute, "the overlays' conditions", func() bool {
		ok := map[string]string{}
		for _, name := range []string{"savings-plan", "another-plan"} {
			u, err := dyn.Resource(v1alpha1.NodeOverlayGVR).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			o := &v1alpha1.NodeOverlay{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o) != nil {
				return false
			}
			for _, c := range o.Status.Conditions {
				if c.Type == v1alpha1.ConditionValidationSucceeded {
					ok[name] = string(c.Status) + "/" + c.Reason
				}
			}
		}
		return ok["savings-plan"] == "True/ValidationSucceeded" && ok["another-plan"] == "False/Conflict"
	})
}
