package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/planner"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func casNode(name, group, it, zone, capacity string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	l := map[string]string{"eks.amazonaws.com/nodegroup": group, "eks.amazonaws.com/capacityType": capacity,
		apiv1.LabelInstanceType: it, apiv1.LabelZone: zone, apiv1.LabelArch: "amd64", apiv1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "Amazon Linux 2023.6.20250101"}}}
}

func casPod(name, node string, cpu string, sel map[string]string, tol []corev1.Toleration, gpu int64) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}
	if gpu > 0 {
		req["nvidia.com/gpu"] = *resource.NewQuantity(gpu, resource.DecimalSI)
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, NodeSelector: sel, Tolerations: tol,
			Containers: []corev1.Container{{Name: "c", Image: "app", Resources: corev1.ResourceRequirements{Requests: req, Limits: limitsOf(req, gpu)}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func limitsOf(req corev1.ResourceList, gpu int64) corev1.ResourceList {
	if gpu == 0 {
		return nil
	}
	return corev1.ResourceList{"nvidia.com/gpu": req["nvidia.com/gpu"]}
}

// A cluster of two managed node groups (web on three half-empty
// m5.2xlarge, GPU training on a spot g5.xlarge behind a taint), a DaemonSet
// and a finished Job pod: the proposal plans every running pod, on fewer
// dollars than today's nodes, with today's cost from the catalog.
func TestMigrateFromClusterAutoscaler(t *testing.T) {
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	web := map[string]string{"team": "web"}
	objs := []runtime.Object{
		casNode("ip-1", "web", "m5.2xlarge", "us-east-1a", "ON_DEMAND", web),
		casNode("ip-2", "web", "m5.2xlarge", "us-east-1b", "ON_DEMAND", web),
		casNode("ip-3", "web", "m5.2xlarge", "us-east-1a", "ON_DEMAND", web),
		casNode("ip-4", "train", "g5.xlarge", "us-east-1a", "SPOT", nil, gpuTaint),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fargate-1", Labels: map[string]string{"eks.amazonaws.com/compute-type": "fargate"}}},
	}
	for i := range 6 {
		objs = append(objs, casPod(fmt.Sprintf("web-%d", i), fmt.Sprintf("ip-%d", 1+i%3), "1", web, nil, 0))
	}
	tol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	objs = append(objs, casPod("trainer", "ip-4", "2", nil, tol, 1))
	done := casPod("job-1", "ip-1", "4", nil, nil, 0)
	done.Status.Phase = corev1.PodSucceeded
	agent := casPod("agent-x", "ip-1", "100m", nil, nil, 0)
	agent.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", APIVersion: "apps/v1", UID: "u"}}
	objs = append(objs, done, agent, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default"}, Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec: corev1.PodSpec{Containers: agent.Spec.Containers, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}}})
	kc := fake.NewSimpleClientset(objs...)

	var stdout, stderr bytes.Buffer
	m := casMigration{cluster: "prod-eks", output: "yaml"}
	if err := m.run(context.Background(), kc, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.2xlarge")
	g5, _ := cat.Get("g5.xlarge")
	today := 3*m5.OnDemandPrice + g5.SpotPrice()
	if want := fmt.Sprintf("today: 4 nodes, %.4f USD/hour (list prices)", today); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not a node group's: fargate-1: Fargate") || strings.Contains(stderr.String(), "unschedulable") {
		t.Errorf("stderr:\n%s", stderr.String())
	}

	// The printed proposal, read back as manifests with the pods, plans
	// every pod: the web pods on web nodes, the trainer on a GPU node.
	docs, errs := planner.Parse("proposal.yaml", stdout.Bytes())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pods, _ := kc.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	for i := range pods.Items {
		p := pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || ownedBy(&p, "DaemonSet") {
			continue
		}
		p.Spec.NodeName = ""
		o, err := typedDoc(&p, "v1", "Pod")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, planner.Doc{File: "pods", Index: i + 1, Obj: unstructuredOf(o)})
	}
	built, errs := planner.Build(docs, planner.Options{Zones: []string{"us-east-1a", "us-east-1b"}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res := planner.Solve(built.Input)
	if len(res.Plan.Unschedulable) > 0 || len(built.Input.Pods) != 7 {
		t.Fatalf("%d pods, unschedulable %+v", len(built.Input.Pods), res.Plan.Unschedulable)
	}
	for _, nc := range res.Plan.NewNodeClaims {
		for _, p := range nc.Pods {
			if want := map[bool]string{true: "train", false: "web"}[p == "default/trainer"]; nc.NodePool != want {
				t.Errorf("pod %s planned in NodePool %s, want %s", p, nc.NodePool, want)
			}
		}
	}
	if res.Price >= today {
		t.Errorf("plan %.4f USD/h is not cheaper than today's half-empty nodes %.4f", res.Price, today)
	}
	var nodes int
	var usd, bound float64
	i := strings.Index(stderr.String(), "Joinery's plan for the same 7 pods: ")
	if i < 0 {
		t.Fatalf("stderr has no plan line:\n%s", stderr.String())
	}
	if _, err := fmt.Sscanf(stderr.String()[i:], "Joinery's plan for the same 7 pods: %d nodes, %f USD/hour (lower bound %f)", &nodes, &usd, &bound); err != nil {
		t.Fatalf("plan line: %v\n%s", err, stderr.String())
	}
	if nodes < 2 || usd >= today || usd < bound || bound <= 0 {
		t.Errorf("printed plan: %d nodes, %.4f USD/h, bound %.4f (today %.4f)", nodes, usd, bound, today)
	}
}

func unstructuredOf(o map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: o}
}
