package nodeclass

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/catalog/celexpr"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
)

// KubeletProblem is one refused spec.kubelet setting: the field and why.
type KubeletProblem struct{ Field, Why string }

// KubeletProblems checks spec.kubelet as Karpenter v1.15 does before it
// marks a class ValidationSucceeded: a strict decode against the kubelet's
// own KubeletConfiguration (unknown fields, wrong types), the rules that
// type cannot say (kubeletSemantics), each expression's compilation, and
// what the class's AMI family carries to the node (kubeletFamilyRules).
func KubeletProblems(spec *apiv1.EC2NodeClassSpec) []KubeletProblem {
	if spec == nil || spec.Kubelet == nil {
		return nil
	}
	raw := spec.Kubelet.Raw()
	if len(raw) == 0 {
		return nil
	}
	out := strictDecode(raw)
	out = append(out, kubeletSemantics(raw)...)
	out = append(out, kubeletExpressions(spec.Kubelet)...)
	return append(out, kubeletFamilyRules(spec)...)
}

// strictDecode decodes the configuration into the upstream type: a
// maxPods expression stands in as 0, so that it does not hide the other
// fields' errors (the expression is checked by compiling it).
func strictDecode(raw map[string]json.RawMessage) []KubeletProblem {
	if isJSONString(raw["maxPods"]) {
		raw = maps.Clone(raw)
		raw["maxPods"] = json.RawMessage("0")
	}
	b, _ := json.Marshal(raw)
	strict, err := sigsjson.UnmarshalStrict(b, &kubeletv1beta1.KubeletConfiguration{})
	if err != nil {
		return []KubeletProblem{{"spec.kubelet", err.Error()}}
	}
	var out []KubeletProblem
	for _, e := range strict {
		out = append(out, KubeletProblem{"spec.kubelet", e.Error()})
	}
	return out
}

// kubeletExpressions compiles maxPods's and the reserved maps' expressions.
func kubeletExpressions(k *apiv1.KubeletConfiguration) []KubeletProblem {
	var out []KubeletProblem
	if expr := k.MaxPodsExpression(); expr != "" {
		if err := celexpr.Validate(expr); err != nil {
			out = append(out, KubeletProblem{"spec.kubelet.maxPods", "validating expression, " + err.Error()})
		}
	}
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"kubeReserved", k.KubeReserved}, {"systemReserved", k.SystemReserved}} {
		for _, key := range slices.Sorted(maps.Keys(f.m)) {
			if v := f.m[key]; celexpr.IsExpression(v) && !strings.HasPrefix(v, "-") {
				if err := celexpr.Validate(v); err != nil {
					out = append(out, KubeletProblem{fmt.Sprintf("spec.kubelet.%s[%s]", f.name, key), "validating expression, " + err.Error()})
				}
			}
		}
	}
	return out
}

// kubeletFamilyRules refuses what the family would drop on the way to the
// node (Karpenter's validateKubeletFieldsSupported): only AL2023's nodeadm
// config takes every field; AL2, Bottlerocket and Windows take the typed
// ones, Bottlerocket without podsPerCore, and one clusterDNS address.
// Custom is exempt: its user data is the user's own.
func kubeletFamilyRules(spec *apiv1.EC2NodeClassSpec) []KubeletProblem {
	family, k := spec.Family(), spec.Kubelet
	if family == apiv1.AMIFamilyAL2023 || family == apiv1.AMIFamilyCustom || family == "" {
		return nil
	}
	var out []KubeletProblem
	dropped := k.UnmanagedFields()
	if k.PodsPerCore != nil && family == apiv1.AMIFamilyBottlerocket {
		dropped = append(dropped, "podsPerCore")
		slices.Sort(dropped)
	}
	if len(dropped) > 0 {
		out = append(out, KubeletProblem{"spec.kubelet", fmt.Sprintf("has fields not applied by the %s AMI family that would be silently dropped: %s",
			family, strings.Join(dropped, ", "))})
	}
	if len(k.ClusterDNS) > 1 {
		out = append(out, KubeletProblem{"spec.kubelet.clusterDNS", fmt.Sprintf("the %s AMI family doesn't accept multiple entries, only one, but %d were set",
			family, len(k.ClusterDNS))})
	}
	return out
}

// KubeletGated refuses a class's kubelet expressions while the
// NodeClassCEL feature gate is off (Karpenter's message): the class would
// otherwise launch nodes with defaults the user did not ask for.
func KubeletGated(spec *apiv1.EC2NodeClassSpec, gateOn bool) []string {
	if gateOn || spec == nil || !catalog.HasKubeletExpressions(spec.Kubelet) {
		return nil
	}
	return []string{"spec.kubelet: contains a CEL expression, but the NodeClassCEL feature gate is disabled"}
}

func isJSONString(v json.RawMessage) bool {
	var s string
	return v != nil && json.Unmarshal(v, &s) == nil
}
