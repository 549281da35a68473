// Package bootstrap generates the EC2 user data that makes an instance join
// the cluster, per AMI family, as Karpenter's AWS provider does
// (pkg/providers/amifamily/bootstrap):
//
//   - AL2023: a MIME multi-part document (boundary "//") with the user's own
//     parts first and a nodeadm NodeConfig (application/node.eks.aws) last,
//     so that ours wins in nodeadm's in-order merge;
//   - AL2: the /etc/eks/bootstrap.sh invocation, after the user's parts;
//   - Bottlerocket: TOML settings, ours merged over the user's;
//   - Custom: the user's data as is.
//
// It is pure: no I/O, deterministic output (sorted labels, taints and map
// keys), and bad user input is an error naming spec.userData and why.
package bootstrap

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Cluster facts the node needs to join.
type Cluster struct {
	Name        string
	Endpoint    string // https://...
	CABundle    string // base64 of the PEM CA, as EKS DescribeCluster returns it
	ServiceCIDR string // e.g. 10.100.0.0/16 (required for AL2023)
	DNSIP       string // kube-dns ClusterIP; "" lets the family default apply
}

// Options are the inputs of one node's user data.
type Options struct {
	Family   string // apiv1 AMI family: AL2023, AL2, Bottlerocket, Custom
	Cluster  Cluster
	Labels   map[string]string           // NodeClaim labels to register with
	Taints   []corev1.Taint              // NodeClaim taints + startupTaints (karpenter.sh/unregistered:NoExecute is added)
	Kubelet  *apiv1.KubeletConfiguration // EC2NodeClass spec.kubelet, its expressions resolved for the instance type (catalog ResolveKubelet)
	MaxPods  int32                       // used when Kubelet.MaxPods is nil; 0 = omit
	UserData *string                     // EC2NodeClass spec.userData, merged per family
	// RAID0 is EC2NodeClass spec.instanceStorePolicy RAID0: the node
	// stripes its instance store volumes into one array for ephemeral
	// storage (nodeadm localStorage strategy RAID0, bootstrap.sh
	// --local-disks raid0, Bottlerocket's ephemeral-storage commands).
	RAID0 bool
}

// Generate returns the user data, base64-encoded as EC2 launch templates take it.
func Generate(o Options) (string, error) {
	var raw string
	var err error
	switch o.Family {
	case apiv1.AMIFamilyCustom:
		if o.UserData == nil {
			return "", nil
		}
		return base64.StdEncoding.EncodeToString([]byte(*o.UserData)), nil
	case apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket:
	case apiv1.AMIFamilyWindows2019, apiv1.AMIFamilyWindows2022, apiv1.AMIFamilyWindows2025:
	default:
		return "", fmt.Errorf("amiFamily %q: not supported (%s)", o.Family, familyNames)
	}
	n, err := normalize(o)
	if err != nil {
		return "", err
	}
	switch o.Family {
	case apiv1.AMIFamilyAL2023:
		raw, err = al2023(n, o.UserData)
	case apiv1.AMIFamilyAL2:
		raw, err = al2(n, o.UserData)
	case apiv1.AMIFamilyBottlerocket:
		raw, err = bottlerocket(n, o.UserData)
	default:
		raw = windows(n, o.UserData)
	}
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString([]byte(raw)), nil
}

const familyNames = "AL2023, AL2, Bottlerocket, Windows2019, Windows2022, Windows2025 or Custom"

// aliasFamilies are the alias terms' family names.
var aliasFamilies = map[string]string{
	"al2023": apiv1.AMIFamilyAL2023, "al2": apiv1.AMIFamilyAL2, "bottlerocket": apiv1.AMIFamilyBottlerocket,
	"windows2019": apiv1.AMIFamilyWindows2019, "windows2022": apiv1.AMIFamilyWindows2022, "windows2025": apiv1.AMIFamilyWindows2025,
}

// FamilyOf resolves the family from spec.amiFamily and the alias term
// (al2023@..., al2@..., bottlerocket@...). As in Karpenter v1, a set
// amiFamily must match the alias's family or be Custom; without an alias,
// amiFamily is required.
func FamilyOf(spec *apiv1.EC2NodeClassSpec) (string, error) {
	if spec == nil {
		return "", errors.New("spec: EC2NodeClass spec is nil")
	}
	aliasFamily := ""
	for i, t := range spec.AMISelectorTerms {
		if t.Alias == "" {
			continue
		}
		name, _, _ := strings.Cut(t.Alias, "@")
		aliasFamily = aliasFamilies[strings.ToLower(name)]
		if aliasFamily == "" {
			return "", fmt.Errorf("spec.amiSelectorTerms[%d].alias: family %q not supported (al2023, al2, bottlerocket, windows2019, windows2022, windows2025)", i, name)
		}
		break
	}
	switch spec.AMIFamily {
	case "":
		if aliasFamily == "" {
			return "", errors.New("spec.amiFamily: required when spec.amiSelectorTerms has no alias")
		}
		return aliasFamily, nil
	case apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket, apiv1.AMIFamilyCustom,
		apiv1.AMIFamilyWindows2019, apiv1.AMIFamilyWindows2022, apiv1.AMIFamilyWindows2025:
		if aliasFamily != "" && spec.AMIFamily != apiv1.AMIFamilyCustom && spec.AMIFamily != aliasFamily {
			return "", fmt.Errorf("spec.amiFamily: %q does not match the alias family %q (must be %s or Custom)", spec.AMIFamily, aliasFamily, aliasFamily)
		}
		return spec.AMIFamily, nil
	default:
		return "", fmt.Errorf("spec.amiFamily: %q not supported (%s)", spec.AMIFamily, familyNames)
	}
}

// node is the validated, canonical form of Options every family renders.
type node struct {
	cluster Cluster
	labels  []kv           // sorted by key; kubelet-refused labels dropped
	taints  []corev1.Taint // sorted, unique by (key, effect), unregistered included
	kubelet apiv1.KubeletConfiguration
	maxPods int32 // 0 = unset
	dnsIP   string
	raid0   bool
}

type kv struct{ k, v string }

// normalize validates the options and puts them in canonical order. Every
// value that ends up inside a shell word (AL2) or a kubelet flag is checked
// against the character set Kubernetes allows for it, so user data can never
// carry an injected command.
func normalize(o Options) (*node, error) {
	c := o.Cluster
	if c.Name == "" || !isClusterName(c.Name) {
		return nil, fmt.Errorf("cluster name %q: must match [0-9A-Za-z][A-Za-z0-9_-]*", c.Name)
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(c.Endpoint, "'\"\\ \t\n`$") {
		return nil, fmt.Errorf("cluster endpoint %q: must be an https:// URL", c.Endpoint)
	}
	if c.CABundle == "" {
		return nil, errors.New("cluster CA bundle: empty")
	}
	ca, err := base64.StdEncoding.DecodeString(c.CABundle)
	if err != nil {
		return nil, fmt.Errorf("cluster CA bundle: not base64: %v", err)
	}
	c.CABundle = base64.StdEncoding.EncodeToString(ca)
	if o.Family == apiv1.AMIFamilyAL2023 && c.ServiceCIDR == "" {
		return nil, errors.New("cluster service CIDR: required for AL2023 (nodeadm's cluster.cidr)")
	}
	if c.ServiceCIDR != "" {
		if _, _, err := net.ParseCIDR(c.ServiceCIDR); err != nil {
			return nil, fmt.Errorf("cluster service CIDR %q: %v", c.ServiceCIDR, err)
		}
	}
	n := &node{cluster: c, raid0: o.RAID0}
	if o.Kubelet != nil {
		n.kubelet = *o.Kubelet
	}
	if err := checkKubelet(o.Family, &n.kubelet); err != nil {
		return nil, err
	}
	if c, ok := n.kubelet.MaxPodsCount(); ok {
		n.maxPods = c
	} else if o.MaxPods > 0 {
		n.maxPods = o.MaxPods
	}
	if n.maxPods < 0 {
		return nil, fmt.Errorf("spec.kubelet.maxPods: %d is negative", n.maxPods)
	}
	n.dnsIP = c.DNSIP
	if len(n.kubelet.ClusterDNS) > 0 {
		n.dnsIP = n.kubelet.ClusterDNS[0]
	}
	for i, ip := range n.kubelet.ClusterDNS {
		if net.ParseIP(ip) == nil {
			return nil, fmt.Errorf("spec.kubelet.clusterDNS[%d]: %q is not an IP address", i, ip)
		}
	}
	if n.dnsIP != "" && net.ParseIP(n.dnsIP) == nil {
		return nil, fmt.Errorf("cluster DNS IP %q: not an IP address", n.dnsIP)
	}

	for k, v := range o.Labels {
		if !isLabelKey(k) {
			return nil, fmt.Errorf("label %q: not a valid label key", k)
		}
		if !isLabelValue(v) {
			return nil, fmt.Errorf("label %s=%q: not a valid label value", k, v)
		}
		if KubeletRefusesLabel(k) {
			continue
		}
		n.labels = append(n.labels, kv{k, v})
	}
	sort.Slice(n.labels, func(i, j int) bool { return n.labels[i].k < n.labels[j].k })

	taints := append(append([]corev1.Taint(nil), o.Taints...), corev1.Taint{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute})
	seen := map[[2]string]bool{}
	for i, t := range taints {
		if !isLabelKey(t.Key) {
			return nil, fmt.Errorf("taints[%d]: key %q is not a valid taint key", i, t.Key)
		}
		if !isLabelValue(t.Value) {
			return nil, fmt.Errorf("taints[%d]: value %q is not a valid taint value", i, t.Value)
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("taints[%d]: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
		// The API server refuses a Node with two taints of one key and effect.
		id := [2]string{t.Key, string(t.Effect)}
		if seen[id] {
			continue
		}
		seen[id] = true
		n.taints = append(n.taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	sort.Slice(n.taints, func(i, j int) bool {
		a, b := n.taints[i], n.taints[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.Effect < b.Effect
	})
	return n, nil
}

// checkKubelet validates the map entries of spec.kubelet: keys and values
// go into kubelet flags (AL2) and must not carry quotes or spaces; then
// what the family carries (checkFamilyKubelet).
func checkKubelet(family string, k *apiv1.KubeletConfiguration) error {
	for _, m := range []struct {
		name string
		m    map[string]string
	}{{"systemReserved", k.SystemReserved}, {"kubeReserved", k.KubeReserved}, {"evictionHard", k.EvictionHard}, {"evictionSoft", k.EvictionSoft}} {
		for key, v := range m.m {
			if !isToken(key, "._-") {
				return fmt.Errorf("spec.kubelet.%s: key %q is not a resource or signal name", m.name, key)
			}
			if !isToken(v, ".%+-") {
				return fmt.Errorf("spec.kubelet.%s[%s]: %q is not a quantity or percentage", m.name, key, v)
			}
		}
	}
	for key, d := range k.EvictionSoftGracePeriod {
		if !isToken(key, "._-") {
			return fmt.Errorf("spec.kubelet.evictionSoftGracePeriod: key %q is not a signal name", key)
		}
		if d.Duration < 0 {
			return fmt.Errorf("spec.kubelet.evictionSoftGracePeriod[%s]: %s is negative", key, d.Duration)
		}
	}
	for _, p := range []struct {
		name string
		v    *int32
	}{{"podsPerCore", k.PodsPerCore}, {"evictionMaxPodGracePeriod", k.EvictionMaxPodGracePeriod}, {"imageGCHighThresholdPercent", k.ImageGCHighThresholdPercent}, {"imageGCLowThresholdPercent", k.ImageGCLowThresholdPercent}} {
		if p.v != nil && *p.v < 0 {
			return fmt.Errorf("spec.kubelet.%s: %d is negative", p.name, *p.v)
		}
	}
	return checkFamilyKubelet(family, k)
}

// KubeletRefusesLabel reports whether a kubelet refuses to start with this
// label in --node-labels: a label in the kubernetes.io or k8s.io domains
// (or a subdomain) that is not one of the labels the kubelet may set itself
// (k8s.io/kubelet/pkg/apis well_known_labels.go, as enforced with the
// NodeRestriction admission plugin). node-restriction.kubernetes.io/ labels
// fall under this rule.
func KubeletRefusesLabel(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	domain = strings.ToLower(domain)
	restricted := func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }
	if !restricted("kubernetes.io") && !restricted("k8s.io") {
		return false
	}
	switch key {
	case "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type",
		"node.kubernetes.io/instance-type",
		"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
		"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region":
		return false
	}
	return !restricted("kubelet.kubernetes.io") && !restricted("node.kubernetes.io")
}

func isClusterName(s string) bool {
	for i, r := range s {
		alnum := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !alnum && (i == 0 || (r != '-' && r != '_')) {
			return false
		}
	}
	return len(s) <= 100
}

// isLabelKey: [prefix/]name, prefix a DNS subdomain, name ≤ 63 of
// [A-Za-z0-9._-] starting and ending alphanumeric.
func isLabelKey(s string) bool {
	prefix, name, ok := strings.Cut(s, "/")
	if !ok {
		name, prefix = prefix, ""
	} else if prefix == "" || len(prefix) > 253 || !isToken(prefix, ".-") || strings.Contains(name, "/") {
		return false
	}
	return name != "" && isLabelValue(name)
}

// isLabelValue: empty, or ≤ 63 of [A-Za-z0-9._-] starting and ending alphanumeric.
func isLabelValue(s string) bool {
	if s == "" {
		return true
	}
	if len(s) > 63 || !isToken(s, "._-") {
		return false
	}
	return isAlnum(s[0]) && isAlnum(s[len(s)-1])
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// isToken: non-empty, alphanumerics plus the given punctuation only.
func isToken(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && !strings.ContainsRune(extra, rune(s[i])) {
			return false
		}
	}
	return true
}

// userDataError names the field the bad input came from.
func userDataError(format string, args ...any) error {
	return fmt.Errorf("spec.userData: "+format, args...)
}
