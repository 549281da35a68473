//go:build integration

package integration

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func deployment(name string, replicas int32, annotations map[string]string) *appsv1.Deployment {
	zero := int64(0)
	lbl := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl, Annotations: annotations},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &zero, Containers: []corev1.Container{{Name: "c", Image: "pause",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}
}

// A node holding a pod annotated karpenter.sh/do-not-disrupt: "30m" (a
// duration, Karpenter v1.12+) and pods behind a PDB that allows nothing is
// not disrupted, and says why on a real API server: DisruptionBlocked
// Events on its Node and NodeClaim naming the pod and the PDB, once (not
// every pass), the Consolidation workflow's status listing the node with
// both reasons, and joinery_disruption_blocked_nodes by reason.
func TestDisruptionBlockedSaysWhy(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		c.MetricsAddr = metricsAddr
	})
	objs := readManifests(t, "../../examples/nodepools.yaml")
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "EC2NodeClass" || o.GetName() == "general-purpose" {
			_ = unstructured.SetNestedField(o.Object, "5s", "spec", "disruption", "consolidateAfter")
			keep = append(keep, o)
		}
	}
	e.apply(t, keep)
	zero := intstr.FromInt32(0)
	if _, err := e.kc.PolicyV1().PodDisruptionBudgets("default").Create(e.ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*appsv1.Deployment{deployment("guarded", 1, map[string]string{apiv1.AnnotationDoNotDisrupt: "30m"}), deployment("web", 2, nil)} {
		if _, err := e.kc.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := world.WaitSettled(e.ctx, e.kc, 3, []string{"default"}); err != nil {
		t.Fatal(err)
	}
	podOf := func(app string) corev1.Pod {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil || len(pods.Items) == 0 {
			t.Fatalf("%s pods: %v %v", app, pods, err)
		}
		return pods.Items[0]
	}
	guarded, web := podOf("guarded"), podOf("web")
	t.Logf("guarded on %s, web on %s", guarded.Spec.NodeName, web.Spec.NodeName)

	// Events on the Node (recorded against its name) and on its NodeClaim.
	blockedEvents := func(obj string) []corev1.Event {
		list, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + obj + ",reason=DisruptionBlocked"})
		if err != nil {
			return nil
		}
		return list.Items
	}
	says := func(evs []corev1.Event, sub string) *corev1.Event {
		for i := range evs {
			if strings.Contains(evs[i].Message, sub) {
				return &evs[i]
			}
		}
		return nil
	}
	dnd := `Pod default/` + guarded.Name + ` has "karpenter.sh/do-not-disrupt" annotation`
	const pdb = "PDB default/web prevents pod evictions (pod"
	waitFor(t, 2*time.Minute, "DisruptionBlocked Events on the nodes", func() bool {
		return says(blockedEvents(guarded.Spec.NodeName), dnd) != nil && says(blockedEvents(web.Spec.NodeName), pdb) != nil
	})
	var st workflows.ConsolidationStatus
	reasons := map[string]map[string]string{} // node -> kind -> message
	claims := map[string]string{}
	waitFor(t, time.Minute, "the status to list the nodes", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil || st.LastPass == nil {
			return false
		}
		for _, n := range st.LastPass.Nodes {
			reasons[n.Node], claims[n.Node] = map[string]string{}, n.NodeClaim
			for _, r := range n.Reasons {
				reasons[n.Node][r.Reason] = r.Message
			}
		}
		return reasons[guarded.Spec.NodeName] != nil && reasons[web.Spec.NodeName] != nil
	})
	for n, rs := range reasons {
		for k, m := range rs {
			t.Logf("%s %s: %s", n, k, m)
		}
	}
	msg := reasons[guarded.Spec.NodeName]["do_not_disrupt_pod"]
	if !strings.HasPrefix(msg, dnd) || !strings.Contains(reasons[web.Spec.NodeName]["pdb"], pdb) {
		t.Fatalf("reasons %+v", reasons)
	}
	if guarded.Status.StartTime != nil {
		until := guarded.Status.StartTime.Add(30 * time.Minute).UTC().Format(time.RFC3339)
		if !strings.HasSuffix(msg, " until "+until) {
			t.Errorf("do-not-disrupt message %q, want until %s", msg, until)
		}
	}
	if st.LastPass.ByReason["pdb"] < 1 || st.LastPass.ByReason["do_not_disrupt_pod"] < 1 {
		t.Errorf("counts %v", st.LastPass.ByReason)
	}
	if says(blockedEvents(claims[web.Spec.NodeName]), pdb) == nil {
		t.Errorf("no DisruptionBlocked Event on NodeClaim %s", claims[web.Spec.NodeName])
	}
	// Passes run every 2 s; the Events are deduplicated for 2 minutes, so
	// after several more passes each is still one Event, published once.
	passes := st.Passes
	waitFor(t, time.Minute, "five more passes", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		return err == nil && v.Get(&st) == nil && st.Passes >= passes+5
	})
	var same []corev1.Event
	for _, ev := range blockedEvents(web.Spec.NodeName) {
		if strings.Contains(ev.Message, pdb) {
			same = append(same, ev)
		}
	}
	if len(same) != 1 || same[0].Count != 1 {
		t.Errorf("PDB Events on the node, want one published once: %+v", same)
	}
	resp, err := http.Get("http://" + e.addr(metricsAddr) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range fams["joinery_disruption_blocked_nodes"].GetMetric() {
		got[label(m, "reason")] = m.Gauge.GetValue()
	}
	if got["pdb"] < 1 || got["do_not_disrupt_pod"] < 1 {
		t.Errorf("joinery_disruption_blocked_nodes %v", got)
	}
}
