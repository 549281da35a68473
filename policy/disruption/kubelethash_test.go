package disruption

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func kubeletClass(t *testing.T, kubelet string) *apiv1.EC2NodeClass {
	t.Helper()
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apiv1.EC2NodeClassSpec{
		Role: "KarpenterNodeRole", AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		Kubelet: &apiv1.KubeletConfiguration{}}}
	if err := yaml.Unmarshal([]byte(kubelet), cls.Spec.Kubelet); err != nil {
		t.Fatal(err)
	}
	return cls
}

// spec.kubelet is hashed as its canonical JSON: the order fields (and
// their keys) are written in does not matter, any change to a field,
// typed or not, drifts the nodes, and a class with only the typed fields
// hashes as before the configuration was open.
func TestNodeClassHashCoversTheOpenKubelet(t *testing.T) {
	typed := kubeletClass(t, `{clusterDNS: [10.0.0.10], kubeReserved: {cpu: 200m}, maxPods: 30}`)
	// The hash of this class before spec.kubelet was open (commit c57e2f5).
	if h := NodeClassHash(typed); h != "10b895f7805f36d2" {
		t.Errorf("a typed-only kubelet hashes %s, want 10b895f7805f36d2 as before", h)
	}
	a := kubeletClass(t, `{serializeImagePulls: false, featureGates: {A: true, B: false}, maxPods: "min(max_pods, 30)"}`)
	b := kubeletClass(t, `{maxPods: "min(max_pods, 30)", featureGates: {B: false, A: true}, serializeImagePulls: false}`)
	if NodeClassHash(a) != NodeClassHash(b) {
		t.Error("the same settings in another order hash differently")
	}
	for _, changed := range []string{
		`{serializeImagePulls: true, featureGates: {A: true, B: false}, maxPods: "min(max_pods, 30)"}`,
		`{serializeImagePulls: false, featureGates: {A: true}, maxPods: "min(max_pods, 30)"}`,
		`{serializeImagePulls: false, featureGates: {A: true, B: false}, maxPods: "min(max_pods, 31)"}`,
		`{featureGates: {A: true, B: false}, maxPods: "min(max_pods, 30)"}`,
	} {
		cls := kubeletClass(t, changed)
		claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{AnnotationNodeClassHash: NodeClassHash(a)}}}
		if reason, _ := Drift(claim, nil, nil, cls, nil, nodeclass.Launched{}); reason != ReasonNodeClassDrift {
			t.Errorf("%s: drift %q, want %s", changed, reason, ReasonNodeClassDrift)
		}
	}
}
