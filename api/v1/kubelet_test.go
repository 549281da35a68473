package v1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

func TestKubeletDecodesAnyFieldAndRoundTrips(t *testing.T) {
	in := `
maxPods: "min(max_pods, 30)"
podsPerCore: 4
kubeReserved: {cpu: "vcpus * 30", memory: 1Gi}
serializeImagePulls: false
featureGates: {B: true, A: false}
containerLogMaxSize: 20Mi
`
	var k KubeletConfiguration
	if err := yaml.Unmarshal([]byte(in), &k); err != nil {
		t.Fatal(err)
	}
	if got := k.MaxPodsExpression(); got != "min(max_pods, 30)" {
		t.Errorf("maxPods expression %q", got)
	}
	if *k.PodsPerCore != 4 || k.KubeReserved["cpu"] != "vcpus * 30" || k.KubeReserved["memory"] != "1Gi" {
		t.Errorf("typed fields %+v", k)
	}
	if got := k.UnmanagedFields(); len(got) != 3 || got[0] != "containerLogMaxSize" || got[1] != "featureGates" || got[2] != "serializeImagePulls" {
		t.Errorf("unmanaged %v", got)
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"maxPods":"min(max_pods, 30)","podsPerCore":4,"kubeReserved":{"cpu":"vcpus * 30","memory":"1Gi"},` +
		`"containerLogMaxSize":"20Mi","featureGates":{"A":false,"B":true},"serializeImagePulls":false}`
	if string(b) != want {
		t.Errorf("marshal\n got %s\nwant %s", b, want)
	}
	var again KubeletConfiguration
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(again); string(b2) != want {
		t.Errorf("round trip changed it: %s", b2)
	}
}

// A class with only the typed fields writes (and so hashes) as before the
// configuration was open: its nodes do not drift on the upgrade.
func TestKubeletTypedOnlyMarshalsAsBefore(t *testing.T) {
	k := KubeletConfiguration{MaxPods: ptrTo(intstr.FromInt32(30)), SystemReserved: map[string]string{"memory": "100Mi"}}
	if b, _ := json.Marshal(k); string(b) != `{"maxPods":30,"systemReserved":{"memory":"100Mi"}}` {
		t.Errorf("marshal %s", b)
	}
	if n, ok := k.MaxPodsCount(); !ok || n != 30 {
		t.Errorf("MaxPodsCount %d %v", n, ok)
	}
}

// A typed field whose value does not decode is kept as written, for
// validation to report, rather than failing the whole class's decode.
func TestKubeletBadTypedFieldKeptForValidation(t *testing.T) {
	var k KubeletConfiguration
	if err := json.Unmarshal([]byte(`{"podsPerCore":"four","maxPods":12}`), &k); err != nil {
		t.Fatal(err)
	}
	if k.PodsPerCore != nil || string(k.Other["podsPerCore"]) != `"four"` || len(k.UnmanagedFields()) != 0 {
		t.Errorf("podsPerCore %v, other %s, unmanaged %v", k.PodsPerCore, k.Other, k.UnmanagedFields())
	}
	if n, _ := k.MaxPodsCount(); n != 12 {
		t.Errorf("maxPods %d", n)
	}
}

func ptrTo[T any](v T) *T { return &v }
