//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/ec2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// readManifests is the objects of the YAML files, in order; a file that
// cannot be read fails the test.
func readManifests(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kube.ReadManifests(files...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// readTestdata is a file of testdata/.
func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scaleDeployment sets a Deployment's replicas through its scale
// subresource (a patch: no conflict with the controller's status writes).
func (e *env) scaleDeployment(t *testing.T, name string, replicas int) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatalf("scale deployment %s to %d: %v", name, replicas, err)
	}
}

// applyYAML applies the objects of a YAML stream.
func (e *env) applyYAML(t *testing.T, b []byte) {
	t.Helper()
	objs, err := kube.ParseManifests(b)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, objs)
}

// waitLaunched waits up to 2 minutes for the world's EC2 to have an
// instance and returns its instances.
func (e *env) waitLaunched(t *testing.T) []ec2.Instance {
	t.Helper()
	var launched []ec2.Instance
	waitFor(t, 2*time.Minute, "an instance launched", func() bool {
		launched = e.w.EC2.Instances()
		return len(launched) > 0
	})
	return launched
}

// apply creates or updates objs in the world's cluster, in order; a
// refusal fails the test.
func (e *env) apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := kube.Apply(e.ctx, e.w.Kube.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
}

// kept is the objects keep holds to, in order.
func kept(objs []*unstructured.Unstructured, keep func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// poolsClassAndSample: the examples' NodePools and EC2NodeClass, and
// workload-sample (the Deployment and its PDB).
func poolsClassAndSample(o *unstructured.Unstructured) bool {
	return o.GetKind() == "NodePool" || o.GetKind() == "EC2NodeClass" || o.GetName() == "workload-sample"
}

// runControllerLogged is runController (for a world started with
// inProcess false) logging to the world's joinery.log, whose tail a failed
// test prints.
func (e *env) runControllerLogged(t *testing.T, tune ...func(*controller.Config)) {
	t.Helper()
	log, err := logging.NewFile(filepath.Join(e.dir, "joinery.log"), "info")
	if err != nil {
		t.Fatal(err)
	}
	e.runController(t, log, tune...)
}
