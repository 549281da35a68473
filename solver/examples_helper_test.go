package solver

import (
	"fmt"
	"os"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const examplesDir = "/work/shared/examples"

// yamlDocs splits a multi-document YAML file.
func yamlDocs(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var docs []string
	for _, d := range strings.Split("\n"+string(b), "\n---") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func docKind(t testing.TB, doc string) string {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		t.Fatalf("kind: %v", err)
	}
	return tm.Kind
}

// examplePools parses nodepools.yaml into solver NodePools over the real catalog.
func examplePools(t testing.TB) []NodePool {
	t.Helper()
	var nps []*apiv1.NodePool
	classes := map[string]*apiv1.EC2NodeClass{}
	for _, d := range yamlDocs(t, examplesDir+"/nodepools.yaml") {
		switch k := docKind(t, d); k {
		case "NodePool":
			np := &apiv1.NodePool{}
			if err := yaml.UnmarshalStrict([]byte(d), np); err != nil {
				t.Fatalf("NodePool: %v", err)
			}
			nps = append(nps, np)
		case "EC2NodeClass":
			nc := &apiv1.EC2NodeClass{}
			if err := yaml.UnmarshalStrict([]byte(d), nc); err != nil {
				t.Fatalf("EC2NodeClass: %v", err)
			}
			classes[nc.Name] = nc
		default:
			t.Fatalf("unexpected kind %q", k)
		}
	}
	cat := catalog.MustDefault()
	var out []NodePool
	for _, np := range nps {
		nc := classes[np.Spec.Template.Spec.NodeClassRef.Name]
		if nc == nil {
			t.Fatalf("NodePool %s: no EC2NodeClass %s", np.Name, np.Spec.Template.Spec.NodeClassRef.Name)
		}
		out = append(out, NodePoolFromAPI(np, nc, cat, catalog.DefaultZones, nil))
	}
	return out
}

// exampleK8sPods expands workloads.yaml into pods: a Deployment into its
// replicas, a Job into its parallelism; the n-th document's pods are
// created at second 1_700_000_000+n.
func exampleK8sPods(t testing.TB) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for n, d := range yamlDocs(t, examplesDir+"/workloads.yaml") {
		created := metav1.Unix(1_700_000_000+int64(n), 0)
		mk := func(name string, tmpl corev1.PodTemplateSpec) *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
			p.Namespace, p.Name, p.CreationTimestamp = "default", name, created
			return p
		}
		switch k := docKind(t, d); k {
		case "Deployment":
			dep := &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(d), dep); err != nil {
				t.Fatalf("Deployment: %v", err)
			}
			for i := 0; i < int(*dep.Spec.Replicas); i++ {
				pods = append(pods, mk(fmt.Sprintf("%s-%d", dep.Name, i), dep.Spec.Template))
			}
		case "Job":
			job := &batchv1.Job{}
			if err := yaml.UnmarshalStrict([]byte(d), job); err != nil {
				t.Fatalf("Job: %v", err)
			}
			for i := 0; i < int(*job.Spec.Parallelism); i++ {
				pods = append(pods, mk(fmt.Sprintf("%s-%d", job.Name, i), job.Spec.Template))
			}
		case "Pod":
			p := &corev1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(d), p); err != nil {
				t.Fatalf("Pod: %v", err)
			}
			p.Namespace, p.CreationTimestamp = "default", created
			pods = append(pods, p)
		case "PodDisruptionBudget":
		default:
			t.Fatalf("unexpected kind %q", k)
		}
	}
	return pods
}
