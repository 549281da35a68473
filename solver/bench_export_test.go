package solver

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinery/joinery/catalog"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// mixedExport is where TestExportMixed writes the hard mixed inputs as
// manifests, for Karpenter's scheduler (shared/tools/karpenter-harness)
// and `starter plan`.
var mixedExport = flag.String("mixed-export", "", "TestExportMixed: directory to write the hard mixed inputs to")

// TestExportMixed writes, per hard mixed input of 10,000 pods, a directory
// with nodepools.yaml, workloads.yaml (the DaemonSet, Deployments, Jobs
// and StatefulSets) and spot-savings.csv (the spot prices as the advisor's
// savings file the harness reads):
//
//	go test -run TestExportMixed ./solver/ -args -mixed-export DIR
func TestExportMixed(t *testing.T) {
	if *mixedExport == "" {
		t.Skip("no -mixed-export")
	}
	for _, v := range mixedHardVariants {
		dir := filepath.Join(*mixedExport, strings.ReplaceAll(v.String(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var pools, work, csv bytes.Buffer
		for _, np := range mixedAPIPools(v.spot == "od", v.pools) {
			writeYAMLDoc(t, &pools, np)
		}
		writeYAMLDoc(t, &work, mixedDaemonSetAPI())
		for _, w := range mixedWorkloads(10000, v) {
			writeYAMLDoc(t, &work, w.api())
		}
		csv.WriteString("instance_type,savings_vs_ondemand_pct\n")
		market := (*catalog.Market)(nil)
		if v.spot == "market" {
			market = mixedSpotMarket(v.seed)
		}
		for _, it := range catalog.MustDefault().Types {
			if it.OnDemandPrice <= 0 {
				continue
			}
			spot := market.Price(it, catalog.DefaultZones[0], "spot")
			fmt.Fprintf(&csv, "%s,%.6f\n", it.Name, 100*(1-spot/it.OnDemandPrice))
		}
		for name, b := range map[string]*bytes.Buffer{"nodepools.yaml": &pools, "workloads.yaml": &work, "spot-savings.csv": &csv} {
			if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %s", dir)
	}
}

func writeYAMLDoc(t *testing.T, b *bytes.Buffer, obj any) {
	t.Helper()
	y, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("---\n")
	b.Write(y)
}

// mixedDaemonSetAPI is mixedDaemonSet as a DaemonSet.
func mixedDaemonSetAPI() *appsv1.DaemonSet {
	labels := map[string]string{"app": "node-agent"}
	return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "node-agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "agent", Image: "agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("200Mi")}}}}}}}}
}

// api is the workload as the Deployment, Job or StatefulSet whose
// replicas are w.pod's.
func (w mixedWorkload) api() any {
	p := w.pod(0, 0)
	n := int32(w.replicas)
	req := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(w.cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(w.memMiB<<20, resource.BinarySI)}
	if w.gpus > 0 {
		req["nvidia.com/gpu"] = *resource.NewQuantity(w.gpus, resource.DecimalSI)
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: corev1.PodSpec{
		NodeSelector: p.NodeSelector, Tolerations: p.Tolerations, TopologySpreadConstraints: p.TopologySpread,
		Containers: []corev1.Container{{Name: "main", Image: "app", Resources: corev1.ResourceRequirements{Requests: req}}}}}
	meta := metav1.ObjectMeta{Namespace: w.kind, Name: w.name}
	sel := &metav1.LabelSelector{MatchLabels: p.Labels}
	switch w.kind {
	case "batch", "gpu":
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta,
			Spec: batchv1.JobSpec{Parallelism: &n, Completions: &n, Template: tmpl}}
	case "memory":
		return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: &n, Selector: sel, Template: tmpl}}
	}
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: sel, Template: tmpl}}
}
