package bootstrap

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// nodeConfig is the subset of nodeadm's NodeConfig
// (github.com/awslabs/amazon-eks-ami nodeadm/api/v1alpha1) Joinery writes.
type nodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       nodeConfigSpec `json:"spec"`
}

type nodeConfigSpec struct {
	Cluster  nodeConfigCluster   `json:"cluster"`
	Instance *nodeConfigInstance `json:"instance,omitempty"`
	Kubelet  nodeConfigKubelet   `json:"kubelet"`
}

// nodeConfigInstance is spec.instance: how the instance's local disks are
// used (localStorage.strategy RAID0: one RAID0 array of the instance store
// volumes, mounted for the kubelet and containerd).
type nodeConfigInstance struct {
	LocalStorage nodeConfigLocalStorage `json:"localStorage"`
}

type nodeConfigLocalStorage struct {
	Strategy string `json:"strategy"`
}

type nodeConfigCluster struct {
	Name                 string `json:"name"`
	APIServerEndpoint    string `json:"apiServerEndpoint"`
	CertificateAuthority string `json:"certificateAuthority"` // []byte in nodeadm: base64 in YAML
	CIDR                 string `json:"cidr"`
}

type nodeConfigKubelet struct {
	Config map[string]any `json:"config,omitempty"`
	Flags  []string       `json:"flags,omitempty"`
}

const (
	nodeConfigAPIVersion = "node.eks.aws/v1alpha1"
	nodeConfigKind       = "NodeConfig"
)

// al2023 renders the MIME document: the user's parts, then our NodeConfig.
func al2023(n *node, userData *string) (string, error) {
	parts, err := al2023UserParts(userData)
	if err != nil {
		return "", err
	}
	nc, err := n.nodeConfigYAML()
	if err != nil {
		return "", err
	}
	return serializeMIME(append(parts, newPart(contentTypeNodeConfig, nc)))
}

func (n *node) nodeConfigYAML() (string, error) {
	cfg := map[string]any{}
	k := n.kubelet
	// The fields Joinery does not type, verbatim; the typed ones follow.
	for name, v := range k.Other {
		cfg[name] = v
	}
	if n.maxPods > 0 {
		cfg["maxPods"] = n.maxPods
	}
	if n.dnsIP != "" {
		dns := k.ClusterDNS
		if len(dns) == 0 {
			dns = []string{n.dnsIP}
		}
		cfg["clusterDNS"] = dns
	}
	if k.PodsPerCore != nil {
		cfg["podsPerCore"] = *k.PodsPerCore
	}
	for name, m := range map[string]map[string]string{
		"kubeReserved": k.KubeReserved, "systemReserved": k.SystemReserved,
		"evictionHard": k.EvictionHard, "evictionSoft": k.EvictionSoft,
	} {
		if len(m) > 0 {
			cfg[name] = m
		}
	}
	if len(k.EvictionSoftGracePeriod) > 0 {
		g := map[string]string{}
		for s, d := range k.EvictionSoftGracePeriod {
			g[s] = d.Duration.String()
		}
		cfg["evictionSoftGracePeriod"] = g
	}
	if k.EvictionMaxPodGracePeriod != nil {
		cfg["evictionMaxPodGracePeriod"] = *k.EvictionMaxPodGracePeriod
	}
	if k.ImageGCHighThresholdPercent != nil {
		cfg["imageGCHighThresholdPercent"] = *k.ImageGCHighThresholdPercent
	}
	if k.ImageGCLowThresholdPercent != nil {
		cfg["imageGCLowThresholdPercent"] = *k.ImageGCLowThresholdPercent
	}
	if k.CPUCFSQuota != nil {
		cfg["cpuCFSQuota"] = *k.CPUCFSQuota
	}
	taints := make([]map[string]string, 0, len(n.taints))
	for _, t := range n.taints {
		m := map[string]string{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			m["value"] = t.Value
		}
		taints = append(taints, m)
	}
	cfg["registerWithTaints"] = taints
	c := nodeConfig{
		APIVersion: nodeConfigAPIVersion,
		Kind:       nodeConfigKind,
		Spec: nodeConfigSpec{
			Cluster: nodeConfigCluster{
				Name:                 n.cluster.Name,
				APIServerEndpoint:    n.cluster.Endpoint,
				CertificateAuthority: n.cluster.CABundle,
				CIDR:                 n.cluster.ServiceCIDR,
			},
			Kubelet: nodeConfigKubelet{Config: cfg},
		},
	}
	if n.raid0 {
		c.Spec.Instance = &nodeConfigInstance{LocalStorage: nodeConfigLocalStorage{Strategy: "RAID0"}}
	}
	if arg := n.nodeLabelsFlag(); arg != "" {
		c.Spec.Kubelet.Flags = []string{arg}
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	return "# Joinery generated NodeConfig\n" + string(b), nil
}

// nodeLabelsFlag is --node-labels="k=v,..." (sorted), "" without labels.
func (n *node) nodeLabelsFlag() string {
	if len(n.labels) == 0 {
		return ""
	}
	s := make([]string, len(n.labels))
	for i, l := range n.labels {
		s[i] = l.k + "=" + l.v
	}
	return fmt.Sprintf("--node-labels=%q", strings.Join(s, ","))
}

// al2023UserParts turns spec.userData into MIME parts as Karpenter does: a
// MIME document is split into its parts; other YAML is one NodeConfig part
// (or cloud-config when it says so); anything else one shell-script part.
// Every NodeConfig part must decode as nodeadm would decode it.
func al2023UserParts(userData *string) ([]part, error) {
	if userData == nil || strings.TrimSpace(*userData) == "" {
		return nil, nil
	}
	ud := *userData
	var parts []part
	if isMIME(ud) {
		var err error
		if parts, err = parseMIME(ud); err != nil {
			return nil, err
		}
	} else {
		var m map[string]any
		switch {
		case strings.HasPrefix(strings.TrimSpace(ud), "#cloud-config"):
			parts = []part{newPart(contentTypeCloudConfig, ud)}
		case yaml.Unmarshal([]byte(ud), &m) == nil && m != nil:
			parts = []part{newPart(contentTypeNodeConfig, ud)}
		default:
			parts = []part{newPart(contentTypeShellScript, ud)}
		}
	}
	for i, p := range parts {
		if p.mediaType() != contentTypeNodeConfig {
			continue
		}
		if err := checkNodeConfig(p.body); err != nil {
			return nil, userDataError("part %d (%s): %v", i+1, contentTypeNodeConfig, err)
		}
	}
	return parts, nil
}

// checkNodeConfig decodes a NodeConfig part as nodeadm does (base64 and gzip
// are undone first; YAML or JSON; apiVersion and kind must be nodeadm's;
// fields must have their types).
func checkNodeConfig(body string) error {
	b := []byte(body)
	if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(body)); err == nil {
		b = d
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		if b, err = io.ReadAll(io.LimitReader(zr, 1<<20)); err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return fmt.Errorf("NodeConfig does not parse: %v", err)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Cluster struct {
				Name                 string `json:"name"`
				APIServerEndpoint    string `json:"apiServerEndpoint"`
				CertificateAuthority []byte `json:"certificateAuthority"`
				CIDR                 string `json:"cidr"`
			} `json:"cluster"`
			Kubelet struct {
				Config map[string]json.RawMessage `json:"config"`
				Flags  []string                   `json:"flags"`
			} `json:"kubelet"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(j, &doc); err != nil {
		return fmt.Errorf("NodeConfig does not parse: %v", err)
	}
	if doc.APIVersion != nodeConfigAPIVersion || doc.Kind != nodeConfigKind {
		return fmt.Errorf("apiVersion %q, kind %q: want %s %s", doc.APIVersion, doc.Kind, nodeConfigAPIVersion, nodeConfigKind)
	}
	if raw, ok := doc.Spec.Kubelet.Config["registerWithTaints"]; ok {
		var t []corev1.Taint
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("spec.kubelet.config.registerWithTaints: %v", err)
		}
	}
	return nil
}
