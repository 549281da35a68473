package v1

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KubeletConfiguration is EC2NodeClass.spec.kubelet. As in Karpenter v1.15
// it is open: any field of the kubelet's KubeletConfiguration
// (k8s.io/kubelet/config/v1beta1). The fields Joinery acts on (planning and
// every family's user data) are typed; every other field is kept verbatim
// in Other, and only AL2023's nodeadm config carries it to the node
// (policy/nodeclass refuses it for the other families).
//
// MaxPods is a count or, behind the NodeClassCEL feature gate, a CEL
// expression evaluated per instance type; a kubeReserved or systemReserved
// value that is not a quantity is such an expression too (catalog
// ResolveKubelet).
type KubeletConfiguration struct {
	MaxPods                     *intstr.IntOrString        `json:"maxPods,omitempty"`
	PodsPerCore                 *int32                     `json:"podsPerCore,omitempty"`
	SystemReserved              map[string]string          `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string          `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string          `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string          `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32                     `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32                     `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32                     `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool                      `json:"cpuCFSQuota,omitempty"`
	ClusterDNS                  []string                   `json:"clusterDNS,omitempty"`
	// Other are the fields set besides the typed ones (and a typed field
	// whose value does not decode, which validation reports), as canonical
	// JSON: object keys sorted at every depth.
	Other map[string]json.RawMessage `json:"-"`
}

// kubeletFields is KubeletConfiguration without its JSON methods.
type kubeletFields KubeletConfiguration

// managedKubeletFields are the typed fields' JSON names.
var managedKubeletFields = map[string]bool{
	"maxPods": true, "podsPerCore": true, "systemReserved": true, "kubeReserved": true, "evictionHard": true,
	"evictionSoft": true, "evictionSoftGracePeriod": true, "evictionMaxPodGracePeriod": true,
	"imageGCHighThresholdPercent": true, "imageGCLowThresholdPercent": true, "cpuCFSQuota": true, "clusterDNS": true,
}

// UnmarshalJSON decodes the typed fields and keeps the rest in Other.
func (k *KubeletConfiguration) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*k = KubeletConfiguration{}
	typed := map[string]json.RawMessage{}
	for key, v := range raw {
		one, _ := json.Marshal(map[string]json.RawMessage{key: v})
		if managedKubeletFields[key] && json.Unmarshal(one, &kubeletFields{}) == nil {
			typed[key] = v
			continue
		}
		c, err := canonicalJSON(v)
		if err != nil {
			return err
		}
		if k.Other == nil {
			k.Other = map[string]json.RawMessage{}
		}
		k.Other[key] = c
	}
	all, _ := json.Marshal(typed)
	return json.Unmarshal(all, (*kubeletFields)(k))
}

// MarshalJSON writes the typed fields in their order, then Other's sorted
// by name: a class without other fields writes (and hashes) as before.
func (k KubeletConfiguration) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(kubeletFields(k))
	if err != nil || len(k.Other) == 0 {
		return b, err
	}
	o, err := json.Marshal(k.Other)
	if err != nil {
		return nil, err
	}
	if len(b) > 2 {
		b = append(b[:len(b)-1], ',')
	} else {
		b = b[:1]
	}
	return append(b, o[1:]...), nil
}

// canonicalJSON re-encodes a value with object keys sorted (numbers kept
// as written), so the class hashes the same whatever the key order.
func canonicalJSON(v json.RawMessage) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// UnmanagedFields are the names of the fields set besides the typed ones,
// sorted: what only AL2023 carries to the node.
func (k *KubeletConfiguration) UnmanagedFields() []string {
	if k == nil {
		return nil
	}
	var out []string
	for name := range k.Other {
		if !managedKubeletFields[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// MaxPodsCount is maxPods as a count; false when unset or an expression.
func (k *KubeletConfiguration) MaxPodsCount() (int32, bool) {
	if k == nil || k.MaxPods == nil || k.MaxPods.Type != intstr.Int {
		return 0, false
	}
	return k.MaxPods.IntVal, true
}

// MaxPodsExpression is maxPods's CEL expression ("" when none).
func (k *KubeletConfiguration) MaxPodsExpression() string {
	if k == nil || k.MaxPods == nil || k.MaxPods.Type != intstr.String {
		return ""
	}
	return k.MaxPods.StrVal
}

// Clone is a deep copy (nil for nil).
func (k *KubeletConfiguration) Clone() *KubeletConfiguration {
	if k == nil {
		return nil
	}
	c := *k
	if k.MaxPods != nil {
		m := *k.MaxPods
		c.MaxPods = &m
	}
	c.SystemReserved, c.KubeReserved = maps.Clone(k.SystemReserved), maps.Clone(k.KubeReserved)
	c.EvictionHard, c.EvictionSoft = maps.Clone(k.EvictionHard), maps.Clone(k.EvictionSoft)
	c.EvictionSoftGracePeriod = maps.Clone(k.EvictionSoftGracePeriod)
	c.ClusterDNS, c.Other = slices.Clone(k.ClusterDNS), maps.Clone(k.Other)
	return &c
}

// Raw is the configuration as one JSON object per field name, typed and
// other alike: what validation reads, as Karpenter reads its open map.
func (k *KubeletConfiguration) Raw() map[string]json.RawMessage {
	if k == nil {
		return nil
	}
	b, _ := json.Marshal(k)
	var out map[string]json.RawMessage
	_ = json.Unmarshal(b, &out)
	return out
}
