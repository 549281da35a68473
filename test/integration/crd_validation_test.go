//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	cluster "github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// crdPorts keep this control plane apart from the local world of the other
// integration tests (startEnv) and from sim/kube's tests (slot 0's; see
// slotOf).
var crdPorts = kube.Ports{Etcd: 27790, EtcdPeer: 27791, APIServer: 27443, Scheduler: 27459, ControllerManager: 27457, Kwok: 27480}

var crdGVR = map[string]schema.GroupVersionResource{
	"NodePool":     apiv1.NodePoolGVR,
	"NodeClaim":    apiv1.NodeClaimGVR,
	"EC2NodeClass": apiv1.EC2NodeClassGVR,
	"NodeOverlay":  v1alpha1.NodeOverlayGVR,
}

// TestCRDValidation installs deploy/crds into a real kube-apiserver and checks
// that the API server itself refuses every bad object of the shared table
// (api/v1/testdata/invalid-*.yaml) with a message naming the field, while it
// accepts every example manifest, the valid edge cases, and what the
// controller writes (NodeClaims and their status).
func TestCRDValidation(t *testing.T) {
	parallel(t)
	s := slotOf(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ports := kube.Ports{Etcd: port(s, crdPorts.Etcd), EtcdPeer: port(s, crdPorts.EtcdPeer), APIServer: port(s, crdPorts.APIServer),
		Scheduler: port(s, crdPorts.Scheduler), ControllerManager: port(s, crdPorts.ControllerManager), Kwok: port(s, crdPorts.Kwok)}
	c, err := kube.Start(ctx, kube.Options{StateDir: t.TempDir(), Ports: ports, BinDir: os.Getenv("JOINERY_KUBE_BIN"), Log: crdLogWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cfg := c.RESTConfig()
	if err := kube.InstallCRDs(ctx, cfg); err != nil {
		t.Fatal(err) // the API server refuses a CRD whose CEL rules do not compile or cost too much
	}
	dyn := dynamic.NewForConfigOrDie(cfg)

	t.Run("good", func(t *testing.T) {
		files, _ := filepath.Glob("../../examples/*.yaml")
		files = append(files, "../../sim/kube/testdata/nodepools.yaml", "testdata/interruption.yaml", "../../api/v1/testdata/valid.yaml")
		n := 0
		for _, f := range files {
			for _, o := range crdObjects(t, f) {
				if err := crdApply(ctx, dyn, o); err != nil {
					t.Errorf("%s: %s %s refused: %v", f, o.GetKind(), o.GetName(), err)
				}
				n++
			}
		}
		if n < 10 {
			t.Fatalf("only %d good objects", n)
		}
		t.Logf("%d good objects accepted", n)
	})

	t.Run("controller writes", func(t *testing.T) {
		// What activities.writeNodeClaim and the lifecycle activities write,
		// through the same cluster.Cluster methods.
		cl := &cluster.Cluster{Dynamic: dyn}
		mv := 2
		nc := &apiv1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "general-purpose-x7k2p", Labels: map[string]string{apiv1.LabelNodePool: "general-purpose"},
				Annotations: map[string]string{"joinery.sh/nominated-pods": "a,b"}},
			Spec: apiv1.NodeClaimSpec{
				Taints: []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}},
				Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
					{Key: apiv1.LabelArch, Operator: apiv1.OpIn, Values: []string{"amd64", "arm64"}},
					{Key: apiv1.LabelHostname, Operator: apiv1.OpNotIn, Values: []string{"ip-10-0-0-9"}},
					{Key: apiv1.LabelInstanceGen, Operator: apiv1.OpGt, Values: []string{"5"}},
					{Key: apiv1.LabelCapacityType, Operator: apiv1.OpIn, Values: []string{"spot", "on-demand"}, MinValues: &mv},
					{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: []string{"m5.large", "m6i.large"}},
				},
				Resources:              apiv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("3Gi"), corev1.ResourcePods: resource.MustParse("3")}},
				NodeClassRef:           &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
				ExpireAfter:            "720h",
				TerminationGracePeriod: &metav1.Duration{Duration: 24 * time.Hour},
			},
		}
		if err := cl.CreateNodeClaim(ctx, nc); err != nil {
			t.Fatalf("CreateNodeClaim: %v", err)
		}
		if err := cl.PatchNodeClaim(ctx, nc.Name, crdJSON(t, map[string]any{"metadata": map[string]any{"labels": map[string]string{apiv1.LabelZone: "us-east-1a"}}})); err != nil {
			t.Errorf("PatchNodeClaim: %v", err)
		}
		status := map[string]any{"status": map[string]any{
			"providerID":       "aws:///us-east-1a/i-0123456789abcdef0",
			"nodeName":         "ip-10-0-0-4.ec2.internal",
			"lastPodEventTime": metav1.Now(),
			"capacity":         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("7548Mi")},
			"allocatable":      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourcePods: resource.MustParse("29")},
			"conditions": []metav1.Condition{
				{Type: apiv1.ConditionLaunched, Status: metav1.ConditionTrue, Reason: "Launched", Message: "instance i-0123", LastTransitionTime: metav1.Now()},
				{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "", LastTransitionTime: metav1.Now()},
			},
		}}
		if err := cl.PatchNodeClaimStatus(ctx, nc.Name, crdJSON(t, status)); err != nil {
			t.Fatalf("PatchNodeClaimStatus: %v", err)
		}
		got, err := cl.NodeClaim(ctx, nc.Name)
		if err != nil || got.Status.ProviderID == "" || len(got.Status.Conditions) != 2 || len(got.Spec.Requirements) != 5 ||
			got.Spec.Requirements[3].MinValues == nil || got.Spec.TerminationGracePeriod == nil || got.Status.LastPodEventTime == nil {
			t.Errorf("NodeClaim read back: %+v, %v", got, err)
		}
	})

	t.Run("scale", func(t *testing.T) { crdScale(ctx, t, dyn) })

	t.Run("bad", func(t *testing.T) {
		n := 0
		for _, f := range []string{"../../api/v1/testdata/invalid-nodepools.yaml", "../../api/v1/testdata/invalid-others.yaml", "../../api/v1alpha1/testdata/invalid-nodeoverlays.yaml"} {
			for _, o := range crdObjects(t, f) {
				n++
				field := o.GetAnnotations()["test.joinery.sh/field"]
				msg := o.GetAnnotations()["test.joinery.sh/message"]
				err := crdCreate(ctx, dyn, o)
				switch {
				case err == nil:
					t.Errorf("%s %s accepted, want it refused at %s", o.GetKind(), o.GetName(), field)
				case !apierrors.IsInvalid(err):
					t.Errorf("%s %s: %v, want 422 Invalid", o.GetKind(), o.GetName(), err)
				case !strings.Contains(err.Error(), field+":") && !strings.Contains(err.Error(), field+"[") && !strings.Contains(err.Error(), field+"."):
					// field: the field itself; field[i] or field.key: an item or a map entry of it.
					t.Errorf("%s %s: %v\n  want the field %s", o.GetKind(), o.GetName(), err, field)
				case msg != "" && !strings.Contains(err.Error(), msg):
					t.Errorf("%s %s: %v\n  want %q", o.GetKind(), o.GetName(), err, msg)
				default:
					t.Logf("%s %s: %s", o.GetKind(), o.GetName(), crdShortErr(err))
				}
			}
		}
		if n < 80 {
			t.Fatalf("only %d bad objects", n)
		}
	})

	t.Run("update", func(t *testing.T) {
		// Updates are validated as creates are: weight 0 on an existing pool.
		patch := []byte(`{"spec":{"weight":0}}`)
		_, err := dyn.Resource(apiv1.NodePoolGVR).Patch(ctx, "general-purpose", types.MergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.weight") {
			t.Errorf("weight 0 by update: %v", err)
		}
	})

	t.Run("static transition", func(t *testing.T) {
		// Karpenter v1.8: a NodePool cannot move between static and
		// dynamic provisioning.
		patch := []byte(`{"spec":{"replicas":3,"weight":null}}`)
		_, err := dyn.Resource(apiv1.NodePoolGVR).Patch(ctx, "general-purpose", types.MergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") ||
			!strings.Contains(err.Error(), "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes") {
			t.Errorf("replicas set on a dynamic pool: %v", err)
		}
	})

	t.Run("unknown field", func(t *testing.T) {
		// A typo is refused under strict field validation (kubectl's default),
		// not silently dropped.
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: typo}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirments:
        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
`), &o.Object); err != nil {
			t.Fatal(err)
		}
		err := crdCreate(ctx, dyn, o)
		if err == nil || !strings.Contains(err.Error(), `unknown field "spec.template.spec.requirments"`) {
			t.Errorf("typo: %v", err)
		}
	})
}

// crdObjects reads the NodePools, NodeClaims and EC2NodeClasses of a manifest file.
func crdObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs := readManifests(t, path)
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := crdGVR[o.GetKind()]; ok {
			out = append(out, o)
		}
	}
	return out
}

// crdApply server-side applies an object with strict field validation.
func crdApply(ctx context.Context, dyn dynamic.Interface, o *unstructured.Unstructured) error {
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = dyn.Resource(crdGVR[o.GetKind()]).Patch(ctx, o.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "crd-validation-test", Force: &force, FieldValidation: "Strict"})
	return err
}

// crdCreate creates an object with strict field validation.
func crdCreate(ctx context.Context, dyn dynamic.Interface, o *unstructured.Unstructured) error {
	_, err := dyn.Resource(crdGVR[o.GetKind()]).Create(ctx, o, metav1.CreateOptions{FieldValidation: "Strict"})
	return err
}

func crdShortErr(err error) string {
	s := err.Error()
	if i := strings.Index(s, " is invalid: "); i >= 0 {
		s = s[i+len(" is invalid: "):]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func crdJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// crdLogWriter sends the control plane's lifecycle lines to the test log.
type crdLogWriter struct{ t *testing.T }

func (w crdLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// crdScale: `kubectl scale nodepool` sets a static pool's spec.replicas
// through the scale subresource, whose status is the pool's status.nodes;
// a dynamic pool has no scale (and replicas may not be added to one).
func crdScale(ctx context.Context, t *testing.T, dyn dynamic.Interface) {
	pools := dyn.Resource(apiv1.NodePoolGVR)
	static := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "scaled"},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []any{}}}}}}
	if _, err := pools.Create(ctx, static, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pools.Patch(ctx, "scaled", types.MergePatchType, crdJSON(t, map[string]any{"status": map[string]any{"nodes": 2}}),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	scale, err := pools.Get(ctx, "scaled", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(scale.Object, "status", "replicas"); r != 2 {
		t.Errorf("scale status.replicas %d, want status.nodes 2", r)
	}
	_ = unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas")
	if _, err := pools.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("scale to 5: %v", err)
	}
	got, err := pools.Get(ctx, "scaled", metav1.GetOptions{})
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); err != nil || r != 5 {
		t.Errorf("spec.replicas %d after scaling, %v; want 5", r, err)
	}
	// kubectl reads the scale first: a pool without spec.replicas has none.
	if _, err := pools.Get(ctx, "general-purpose", metav1.GetOptions{}, "scale"); err == nil ||
		!strings.Contains(err.Error(), `the spec replicas field ".spec.replicas" does not exist`) {
		t.Errorf("the scale of a dynamic pool: %v", err)
	}
}
