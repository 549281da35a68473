package nodeclass

import (
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"sigs.k8s.io/yaml"
)

func kubeletSpec(t *testing.T, family, kubelet string) *apiv1.EC2NodeClassSpec {
	t.Helper()
	spec := &apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: family + "@latest"}}}
	if family == "custom" {
		spec.AMIFamily, spec.AMISelectorTerms = apiv1.AMIFamilyCustom, []apiv1.AMISelectorTerm{{ID: "ami-0123"}}
	}
	spec.Kubelet = &apiv1.KubeletConfiguration{}
	if err := yaml.Unmarshal([]byte(kubelet), spec.Kubelet); err != nil {
		t.Fatal(err)
	}
	return spec
}

// Each rule refuses with the field and Karpenter's reason.
func TestKubeletProblems(t *testing.T) {
	for _, c := range []struct {
		family, kubelet, want string
	}{
		{"al2023", `{serializeImagePullz: false}`, `spec.kubelet: unknown field "serializeImagePullz"`},
		{"al2023", `{serializeImagePulls: "no"}`, `spec.kubelet: json: cannot unmarshal string into Go struct field KubeletConfiguration.serializeImagePulls of type bool`},
		{"al2023", `{podsPerCore: "four"}`, `spec.kubelet: json: cannot unmarshal string into Go struct field KubeletConfiguration.podsPerCore of type int32`},
		{"al2023", `{registerWithTaints: []}`, `spec.kubelet.registerWithTaints: can't be set, Joinery sets it from the NodeClaim's taints`},
		{"al2023", `{evictionHard: {memory.free: 1Gi}}`, `spec.kubelet.evictionHard: "memory.free" isn't a valid eviction signal, must be one of memory.available`},
		{"al2023", `{evictionHard: {memory.available: 120%}}`, `spec.kubelet.evictionHard[memory.available]: "120%" must be a percentage or a resource quantity`},
		{"al2023", `{evictionHard: {memory.available: -1Gi}}`, `spec.kubelet.evictionHard[memory.available]: "-1Gi" can't be a negative resource quantity`},
		{"al2023", `{evictionSoft: {memory.available: 1Gi}}`, `spec.kubelet.evictionSoft[memory.available]: has no matching evictionSoftGracePeriod`},
		{"al2023", `{evictionSoft: {memory.available: 1Gi}, evictionSoftGracePeriod: {memory.available: soon}}`, `spec.kubelet.evictionSoftGracePeriod[memory.available]: "soon" must be a duration`},
		{"al2023", `{evictionSoftGracePeriod: {nodefs.available: 1m}}`, `spec.kubelet.evictionSoftGracePeriod[nodefs.available]: has no matching evictionSoft`},
		{"al2023", `{kubeReserved: {gpu: "1"}}`, `spec.kubelet.kubeReserved: "gpu" isn't a reservable resource, must be one of cpu, memory, ephemeral-storage, pid`},
		{"al2023", `{systemReserved: {cpu: -100m}}`, `spec.kubelet.systemReserved[cpu]: "-100m" can't be a negative resource quantity`},
		{"al2023", `{imageGCHighThresholdPercent: 101}`, `spec.kubelet.imageGCHighThresholdPercent: 101 must be between 0 and 100`},
		{"al2023", `{imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}`, `spec.kubelet: imageGCHighThresholdPercent (50) must be greater than imageGCLowThresholdPercent (60)`},
		{"al2023", `{maxPods: -1}`, `spec.kubelet.maxPods: -1 can't be negative`},
		{"al2023", `{maxPods: "gpus * 2"}`, `spec.kubelet.maxPods: validating expression, compiling expression "gpus * 2"`},
		{"al2023", `{kubeReserved: {cpu: "vcpus >"}}`, `spec.kubelet.kubeReserved[cpu]: validating expression`},
		{"bottlerocket", `{serializeImagePulls: false, maxPods: 20}`, `spec.kubelet: has fields not applied by the Bottlerocket AMI family that would be silently dropped: serializeImagePulls`},
		{"bottlerocket", `{podsPerCore: 4}`, `spec.kubelet: has fields not applied by the Bottlerocket AMI family that would be silently dropped: podsPerCore`},
		{"al2", `{clusterDNS: [10.0.0.10, 10.0.0.11]}`, `spec.kubelet.clusterDNS: the AL2 AMI family doesn't accept multiple entries, only one, but 2 were set`},
		{"windows2022", `{containerLogMaxFiles: 3}`, `spec.kubelet: has fields not applied by the Windows2022 AMI family that would be silently dropped: containerLogMaxFiles`},
	} {
		got := Unsupported(kubeletSpec(t, c.family, c.kubelet))
		if !strings.HasPrefix(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s %s:\n got %q\nwant %q", c.family, c.kubelet, got, c.want)
		}
	}
}

// AL2023 takes every field; Custom owns its user data, so nothing is
// refused for it; expressions and percentages are valid.
func TestKubeletAccepted(t *testing.T) {
	for _, c := range []struct{ family, kubelet string }{
		{"al2023", `{serializeImagePulls: false, maxPods: "min(max_pods, 30)", kubeReserved: {cpu: "vcpus * 30", memory: 1Gi}, containerLogMaxSize: 20Mi}`},
		{"al2023", `{evictionSoft: {memory.available: 5%}, evictionSoftGracePeriod: {memory.available: 1m30s}, evictionMinimumReclaim: {memory.available: 100Mi}}`},
		{"custom", `{serializeImagePulls: false, podsPerCore: 2}`},
		{"bottlerocket", `{maxPods: 20, kubeReserved: {cpu: 100m}, clusterDNS: [10.0.0.10]}`},
	} {
		if got := Unsupported(kubeletSpec(t, c.family, c.kubelet)); len(got) > 0 {
			t.Errorf("%s %s refused: %q", c.family, c.kubelet, got)
		}
	}
}

// With the NodeClassCEL gate off an expression is refused, as Karpenter
// refuses it; a class without one is not.
func TestKubeletExpressionsNeedTheGate(t *testing.T) {
	spec := kubeletSpec(t, "al2023", `{kubeReserved: {memory: "memory_mib / 100"}}`)
	if got := KubeletGated(spec, false); len(got) != 1 || got[0] != "spec.kubelet: contains a CEL expression, but the NodeClassCEL feature gate is disabled" {
		t.Errorf("gate off: %q", got)
	}
	if got := KubeletGated(spec, true); got != nil {
		t.Errorf("gate on: %q", got)
	}
	if got := KubeletGated(kubeletSpec(t, "al2023", `{maxPods: 30}`), false); got != nil {
		t.Errorf("no expression: %q", got)
	}
}
