//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	cluster "github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kube"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// An invalid NodePool and a pod no instance type can hold are reported
// (Events with the field and reason), and the rest is still provisioned.
func TestBadInputIsReportedAndTheRestIsProvisioned(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	objs := readManifests(t, "../../examples/nodepools.yaml", "testdata/bad-input.yaml")
	// The NodePool CRD now refuses the broken pool itself (deploy/crds,
	// test/integration/crd_validation_test.go). The controller must still
	// cope with one stored before that validation existed: store it under an
	// open schema, then put deploy/crds back.
	var broken, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "NodePool" && o.GetName() == "broken" {
			broken = append(broken, o)
		} else {
			rest = append(rest, o)
		}
	}
	e.apply(t, rest)
	storeUnvalidated(t, e.ctx, e.w.Kube.RESTConfig(), broken)
	var small int
	var hugeEvent, poolEvent string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=small"})
		if err != nil {
			t.Fatal(err)
		}
		small = 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				small++
			}
		}
		evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.Source.Component != "joinery" {
				continue
			}
			if ev.InvolvedObject.Kind == "Pod" && ev.InvolvedObject.Name == "huge" && ev.Reason == "FailedScheduling" {
				hugeEvent = ev.Message
			}
			if ev.InvolvedObject.Kind == "NodePool" && ev.InvolvedObject.Name == "broken" && ev.Reason == "InvalidNodePool" {
				poolEvent = ev.Message
			}
		}
		if small == 3 && hugeEvent != "" && poolEvent != "" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if small != 3 {
		t.Errorf("%d/3 small pods Running", small)
	}
	if !strings.Contains(hugeEvent, "cpu") {
		t.Errorf("huge pod event = %q, want a reason naming cpu", hugeEvent)
	}
	if !strings.Contains(poolEvent, "spec.template.spec.requirements[0].values[0]") || !strings.Contains(poolEvent, "integer") {
		t.Errorf("NodePool event = %q, want the field and reason", poolEvent)
	}
	huge, err := e.kc.CoreV1().Pods("default").Get(e.ctx, "huge", metav1.GetOptions{})
	if err != nil || huge.Spec.NodeName != "" {
		t.Errorf("huge pod should stay pending: %v %q", err, huge.Spec.NodeName)
	}
	t.Logf("huge: %s", hugeEvent)
	t.Logf("broken: %s", poolEvent)

	// The pools' status: the broken one ValidationSucceeded=False with the
	// field and reason, the valid ones True (kubectl get nodepools: READY).
	dyn := dynamic.NewForConfigOrDie(e.w.Kube.RESTConfig())
	cond := func(pool string) (status, msg string) {
		u, err := dyn.Resource(apiv1.NodePoolGVR).Get(e.ctx, pool, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			if m["type"] == "ValidationSucceeded" {
				status, _ = m["status"].(string)
				msg, _ = m["message"].(string)
			}
		}
		return status, msg
	}
	var bs, bmsg, gs string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		bs, bmsg = cond("broken")
		gs, _ = cond("general-purpose")
		if bs != "" && gs != "" {
			break
		}
	}
	if bs != "False" || !strings.Contains(bmsg, "spec.template.spec.requirements[0].values[0]") || gs != "True" {
		t.Errorf("ValidationSucceeded: broken %q (%q), general-purpose %q; want False with the field, True", bs, bmsg, gs)
	}
}

// storeUnvalidated applies NodePools under an open NodePool schema (as if
// written before the CRD validated them), then reinstalls deploy/crds.
func storeUnvalidated(t *testing.T, ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	crds := apiextensions.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx, "nodepools.karpenter.sh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	open := true
	crd.Spec.Versions[0].Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: &open}}
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // the API server picks up the new schema shortly
	for err = cluster.Apply(ctx, cfg, objs); err != nil; err = cluster.Apply(ctx, cfg, objs) {
		if time.Now().After(deadline) {
			t.Fatalf("apply under an open schema: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := kube.InstallCRDs(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}
