package kubelet

// The node agent: reads the instance's user data as the real one would.
// Independent of cloud/bootstrap on purpose (it must not share its code):
// the round-trip test generates with one and parses with the other.
//
//   - AL2023 (nodeadm): base64, then gzip if so; a MIME multi-part document
//     whose application/node.eks.aws parts are NodeConfigs merged in order
//     (later wins, maps deep-merged, kubelet flags appended), or the whole
//     document as one NodeConfig; shell parts are cloud-init's, ignored.
//   - AL2: the /etc/eks/bootstrap.sh command line in a shell script (alone
//     or a MIME part), its flags, and the kubelet flags in --kubelet-extra-args.
//   - Bottlerocket: TOML [settings.kubernetes].

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Boot formats the agent recognises.
const (
	FormatNodeadm      = "AL2023"       // nodeadm NodeConfig
	FormatBootstrapSh  = "AL2"          // /etc/eks/bootstrap.sh
	FormatBottlerocket = "Bottlerocket" // TOML settings
)

// BootConfig is what the node agent found in the user data: what the
// kubelet will run with.
type BootConfig struct {
	Format      string
	ClusterName string
	Endpoint    string
	CABundle    string // base64 of the PEM bundle
	ServiceCIDR string // AL2023 only
	Labels      map[string]string
	Taints      []corev1.Taint // register-with taints, in order
	MaxPods     *int32         // nil: the AMI computes it (ENI max-pods)
	PodsPerCore *int32
	// KubeReserved, SystemReserved and EvictionHard as set in user data;
	// keys the kubelet defaults are absent.
	KubeReserved   map[string]string
	SystemReserved map[string]string
	EvictionHard   map[string]string
	ClusterDNS     []string
	// RAID0: the instance store volumes are striped into one RAID0 array
	// that holds the kubelet's and containerd's directories (nodeadm
	// spec.instance.localStorage.strategy RAID0, bootstrap.sh --local-disks
	// raid0, Bottlerocket's apiclient ephemeral-storage init and bind).
	RAID0 bool
}

// ParseUserData decodes an instance's user data (base64, as EC2 holds it)
// in whichever format it is: what a custom image whose node agent is not
// known would make of it.
func ParseUserData(b64 string) (*BootConfig, error) {
	raw, err := decodeUserData(b64)
	if err != nil {
		return nil, err
	}
	if parts, ok, err := multipartParts(raw); ok {
		if err != nil {
			return nil, err
		}
		var nodeConfigs [][]byte
		var scripts []string
		for _, p := range parts {
			switch p.mediaType {
			case "application/node.eks.aws":
				nodeConfigs = append(nodeConfigs, p.body)
			case "text/x-shellscript":
				scripts = append(scripts, string(p.body))
			}
		}
		if len(nodeConfigs) > 0 {
			return parseNodeadm(nodeConfigs)
		}
		for _, s := range scripts {
			if line, ok := bootstrapShLine(s); ok {
				return parseBootstrapSh(line)
			}
		}
		return nil, errors.New("MIME user data has no NodeConfig part and no /etc/eks/bootstrap.sh call")
	}
	if line, ok := bootstrapShLine(string(raw)); ok {
		return parseBootstrapSh(line)
	}
	var doc map[string]any
	if toml.Unmarshal(raw, &doc) == nil {
		if _, ok := doc["settings"]; ok {
			return parseBottlerocket(doc)
		}
	}
	c, err := parseNodeadm([][]byte{raw})
	if err != nil {
		return nil, fmt.Errorf("neither MIME with a NodeConfig part, a bootstrap.sh script, Bottlerocket TOML nor a NodeConfig (nodeadm: %v)", err)
	}
	return c, nil
}

// decodeUserData is what IMDS serves: base64-decoded, gunzipped if so.
func decodeUserData(b64 string) ([]byte, error) {
	if strings.TrimSpace(b64) == "" {
		return nil, errors.New("no user data: nothing tells the node which cluster to join")
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("user data is not base64: %v", err)
	}
	return gunzipMaybe(raw)
}

func gunzipMaybe(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gzip user data: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, 16<<10+1))
	if err != nil {
		return nil, fmt.Errorf("gzip user data: %v", err)
	}
	return out, nil
}

type mimePart struct {
	mediaType string
	body      []byte
}

// multipartParts reads a MIME multi-part document; ok is false when the
// data is not one (nodeadm then parses the whole of it as a NodeConfig).
func multipartParts(raw []byte) (parts []mimePart, ok bool, err error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, false, nil
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return nil, false, nil
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for i := 1; ; i++ {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, true, nil
		}
		if err != nil {
			return nil, true, fmt.Errorf("MIME part %d: %v", i, err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, true, fmt.Errorf("MIME part %d: %v", i, err)
		}
		var pmt string
		if ct := p.Header.Get("Content-Type"); ct != "" {
			if pmt, _, err = mime.ParseMediaType(ct); err != nil {
				return nil, true, fmt.Errorf("MIME part %d: Content-Type %q: %v", i, ct, err)
			}
		}
		parts = append(parts, mimePart{mediaType: pmt, body: body})
	}
}

// parseNodeadm decodes and merges NodeConfigs as nodeadm does, then applies
// its validation and defaults that matter for joining.
func parseNodeadm(docs [][]byte) (*BootConfig, error) {
	merged := map[string]any{}
	var flags []string
	for i, d := range docs {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(d))); err == nil {
			d = b
		}
		d, err := gunzipMaybe(d)
		if err != nil {
			return nil, fmt.Errorf("NodeConfig %d: %v", i+1, err)
		}
		j, err := yaml.YAMLToJSON(d)
		if err != nil {
			return nil, fmt.Errorf("NodeConfig %d: %v", i+1, err)
		}
		var obj map[string]any
		if err := json.Unmarshal(j, &obj); err != nil {
			return nil, fmt.Errorf("NodeConfig %d: not a YAML or JSON object", i+1)
		}
		var nc struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Spec       map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(j, &nc); err != nil {
			return nil, fmt.Errorf("NodeConfig %d: %v", i+1, err)
		}
		if nc.Kind != "NodeConfig" || nc.APIVersion != "node.eks.aws/v1alpha1" {
			return nil, fmt.Errorf("NodeConfig %d: apiVersion %q kind %q is not node.eks.aws/v1alpha1 NodeConfig", i+1, nc.APIVersion, nc.Kind)
		}
		if k, ok := nc.Spec["kubelet"].(map[string]any); ok {
			if f, ok := k["flags"]; ok {
				l, ok := f.([]any)
				if !ok {
					return nil, fmt.Errorf("NodeConfig %d: spec.kubelet.flags is not a list", i+1)
				}
				for _, x := range l {
					s, ok := x.(string)
					if !ok {
						return nil, fmt.Errorf("NodeConfig %d: spec.kubelet.flags has a %T", i+1, x)
					}
					flags = append(flags, s)
				}
				delete(k, "flags")
			}
		}
		deepMerge(merged, nc.Spec)
	}
	c := &BootConfig{Format: FormatNodeadm}
	cl, _ := merged["cluster"].(map[string]any)
	c.ClusterName, _ = cl["name"].(string)
	c.Endpoint, _ = cl["apiServerEndpoint"].(string)
	c.CABundle, _ = cl["certificateAuthority"].(string)
	c.ServiceCIDR, _ = cl["cidr"].(string)
	switch {
	case c.ClusterName == "":
		return nil, errors.New("nodeadm: Name is missing in cluster configuration")
	case c.Endpoint == "":
		return nil, errors.New("nodeadm: Apiserver endpoint is missing in cluster configuration")
	case c.CABundle == "":
		return nil, errors.New("nodeadm: Certificate authority is missing in cluster configuration")
	case c.ServiceCIDR == "":
		return nil, errors.New("nodeadm: CIDR is missing in cluster configuration")
	}
	if _, _, err := net.ParseCIDR(c.ServiceCIDR); err != nil {
		return nil, fmt.Errorf("nodeadm: cluster cidr: %v", err)
	}
	if inst, ok := merged["instance"].(map[string]any); ok {
		if ls, ok := inst["localStorage"].(map[string]any); ok {
			c.RAID0 = ls["strategy"] == "RAID0"
		}
	}
	k, _ := merged["kubelet"].(map[string]any)
	cfg, _ := k["config"].(map[string]any)
	if err := c.fromKubeletConfig(cfg); err != nil {
		return nil, fmt.Errorf("nodeadm: spec.kubelet.config: %v", err)
	}
	if len(c.ClusterDNS) == 0 {
		// nodeadm: the 10th address of the service CIDR (IPv4), ::a for IPv6.
		ip, _, _ := net.ParseCIDR(c.ServiceCIDR)
		if v4 := ip.To4(); v4 != nil {
			c.ClusterDNS = []string{fmt.Sprintf("%d.%d.%d.10", v4[0], v4[1], v4[2])}
		} else {
			c.ClusterDNS = []string{strings.Split(c.ServiceCIDR, "/")[0] + "a"}
		}
	}
	if err := c.applyKubeletFlags(flags); err != nil {
		return nil, fmt.Errorf("nodeadm: kubelet flags: %v", err)
	}
	return c, nil
}

// deepMerge merges src into dst: maps recursively, everything else replaced
// (nodeadm's mergo.WithOverride; an empty value does not override).
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				deepMerge(dm, sm)
				continue
			}
			cp := map[string]any{}
			deepMerge(cp, sm)
			dst[k] = cp
			continue
		}
		if v == nil || v == "" {
			if _, ok := dst[k]; ok {
				continue
			}
		}
		dst[k] = v
	}
}

// fromKubeletConfig reads the KubeletConfiguration fields that shape the Node.
func (c *BootConfig) fromKubeletConfig(cfg map[string]any) error {
	if cfg == nil {
		return nil
	}
	var kc struct {
		MaxPods            *int32            `json:"maxPods"`
		PodsPerCore        *int32            `json:"podsPerCore"`
		KubeReserved       map[string]string `json:"kubeReserved"`
		SystemReserved     map[string]string `json:"systemReserved"`
		EvictionHard       map[string]string `json:"evictionHard"`
		ClusterDNS         []string          `json:"clusterDNS"`
		RegisterWithTaints []corev1.Taint    `json:"registerWithTaints"`
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &kc); err != nil {
		return err
	}
	c.MaxPods, c.PodsPerCore = kc.MaxPods, kc.PodsPerCore
	c.KubeReserved, c.SystemReserved, c.EvictionHard = kc.KubeReserved, kc.SystemReserved, kc.EvictionHard
	c.ClusterDNS = kc.ClusterDNS
	c.Taints = kc.RegisterWithTaints
	return nil
}

// applyKubeletFlags applies kubelet command-line flags over the config file
// (flags win, as in the kubelet); --node-labels accumulate, later keys win.
// Flags that do not shape the Node are ignored.
func (c *BootConfig) applyKubeletFlags(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !hasVal {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				continue
			}
			i++
			val = args[i]
		}
		val = unquote(val)
		switch name {
		case "node-labels":
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			for _, kv := range splitList(val) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("--node-labels: %q is not key=value", kv)
				}
				c.Labels[k] = v
			}
		case "register-with-taints":
			c.Taints = nil
			for _, s := range splitList(val) {
				t, err := parseTaint(s)
				if err != nil {
					return fmt.Errorf("--register-with-taints: %v", err)
				}
				c.Taints = append(c.Taints, t)
			}
		case "max-pods", "pods-per-core":
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil {
				return fmt.Errorf("--%s: %v", name, err)
			}
			v := int32(n)
			if name == "max-pods" {
				c.MaxPods = &v
			} else {
				c.PodsPerCore = &v
			}
		case "kube-reserved", "system-reserved", "eviction-hard":
			sep := "="
			if name == "eviction-hard" {
				sep = "<"
			}
			m := map[string]string{}
			for _, kv := range splitList(val) {
				k, v, ok := strings.Cut(kv, sep)
				if !ok {
					return fmt.Errorf("--%s: %q is not key%svalue", name, kv, sep)
				}
				m[k] = v
			}
			switch name {
			case "kube-reserved":
				c.KubeReserved = m
			case "system-reserved":
				c.SystemReserved = m
			default:
				c.EvictionHard = m
			}
		case "cluster-dns":
			c.ClusterDNS = splitList(val)
		}
	}
	return nil
}

// parseTaint reads key[=value]:Effect.
func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("%q has no effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return t, fmt.Errorf("%q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	if k == "" {
		return t, fmt.Errorf("%q has no key", s)
	}
	return t, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// bootstrapShLine finds the bootstrap.sh call in a shell script, with
// backslash-continued lines joined.
func bootstrapShLine(script string) (string, bool) {
	joined := strings.ReplaceAll(strings.ReplaceAll(script, "\r", ""), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			continue
		}
		if i := strings.Index(t, "/etc/eks/bootstrap.sh"); i >= 0 {
			return t[i:], true
		}
	}
	return "", false
}

// shellWords splits a command line as a POSIX shell would for quoting
// (single quotes, double quotes, backslashes); no expansion.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == ';' || ch == '&' || ch == '|' || ch == '#' && !inWord:
			// End of the command.
			i = len(s)
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// parseBootstrapSh reads bootstrap.sh's arguments: the cluster name is the
// positional one; every option takes its value as the next word (the script
// does not understand --opt=value and would take it for a positional).
func parseBootstrapSh(line string) (*BootConfig, error) {
	words, err := shellWords(line)
	if err != nil {
		return nil, fmt.Errorf("bootstrap.sh: %v", err)
	}
	c := &BootConfig{Format: FormatBootstrapSh}
	useMaxPods := true
	var positional, extra []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") || strings.Contains(w, "=") {
			positional = append(positional, w)
			continue
		}
		if i+1 >= len(words) {
			return nil, fmt.Errorf("bootstrap.sh: %s has no value", w)
		}
		i++
		v := words[i]
		switch w {
		case "--apiserver-endpoint":
			c.Endpoint = v
		case "--b64-cluster-ca":
			c.CABundle = v
		case "--dns-cluster-ip":
			c.ClusterDNS = []string{v}
		case "--use-max-pods":
			useMaxPods = v != "false"
		case "--local-disks":
			c.RAID0 = v == "raid0"
		case "--kubelet-extra-args":
			if extra, err = shellWords(v); err != nil {
				return nil, fmt.Errorf("bootstrap.sh --kubelet-extra-args: %v", err)
			}
		}
	}
	if len(positional) != 1 {
		return nil, fmt.Errorf("bootstrap.sh: want one cluster name argument, got %q", positional)
	}
	c.ClusterName = positional[0]
	if c.Endpoint == "" || c.CABundle == "" {
		// The real script would call eks:DescribeCluster here; the local
		// world's nodes have no credentials for that.
		return nil, errors.New("bootstrap.sh: --apiserver-endpoint and --b64-cluster-ca are required")
	}
	if err := c.applyKubeletFlags(extra); err != nil {
		return nil, fmt.Errorf("bootstrap.sh --kubelet-extra-args: %v", err)
	}
	if !useMaxPods && c.MaxPods == nil {
		// --use-max-pods false without --max-pods: the kubelet's own default.
		v := int32(110)
		c.MaxPods = &v
	}
	return c, nil
}

// parseBottlerocket reads [settings.kubernetes].
func parseBottlerocket(doc map[string]any) (*BootConfig, error) {
	settings, ok := doc["settings"].(map[string]any)
	if !ok {
		return nil, errors.New("bottlerocket: settings is not a table")
	}
	k, ok := settings["kubernetes"].(map[string]any)
	if !ok {
		return nil, errors.New("bottlerocket: no [settings.kubernetes]")
	}
	var s struct {
		ClusterName    string              `toml:"cluster-name"`
		APIServer      string              `toml:"api-server"`
		Certificate    string              `toml:"cluster-certificate"`
		ClusterDNSIP   any                 `toml:"cluster-dns-ip"`
		MaxPods        *int32              `toml:"max-pods"`
		NodeLabels     map[string]string   `toml:"node-labels"`
		NodeTaints     map[string][]string `toml:"node-taints"`
		KubeReserved   map[string]string   `toml:"kube-reserved"`
		SystemReserved map[string]string   `toml:"system-reserved"`
		EvictionHard   map[string]string   `toml:"eviction-hard"`
	}
	b, err := toml.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("bottlerocket: %v", err)
	}
	if err := toml.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("bottlerocket: settings.kubernetes: %v", err)
	}
	if s.ClusterName == "" || s.APIServer == "" || s.Certificate == "" {
		return nil, errors.New("bottlerocket: settings.kubernetes needs cluster-name, api-server and cluster-certificate")
	}
	c := &BootConfig{
		Format: FormatBottlerocket, ClusterName: s.ClusterName, Endpoint: s.APIServer, CABundle: s.Certificate,
		MaxPods: s.MaxPods, Labels: s.NodeLabels,
		KubeReserved: s.KubeReserved, SystemReserved: s.SystemReserved, EvictionHard: s.EvictionHard,
		RAID0: bottlerocketEphemeralStorage(settings["bootstrap-commands"]),
	}
	switch v := s.ClusterDNSIP.(type) {
	case string:
		c.ClusterDNS = []string{v}
	case []any:
		for _, x := range v {
			if str, ok := x.(string); ok {
				c.ClusterDNS = append(c.ClusterDNS, str)
			}
		}
	}
	keys := make([]string, 0, len(s.NodeTaints))
	for key := range s.NodeTaints {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		for _, ve := range s.NodeTaints[key] {
			val, effect, ok := strings.Cut(ve, ":")
			if !ok {
				return nil, fmt.Errorf("bottlerocket: node-taints.%s: %q is not value:Effect", key, ve)
			}
			t, err := parseTaint(key + "=" + val + ":" + effect)
			if err != nil {
				return nil, fmt.Errorf("bottlerocket: node-taints: %v", err)
			}
			c.Taints = append(c.Taints, t)
		}
	}
	return c, nil
}

// bottlerocketEphemeralStorage reports whether a bootstrap command (not
// off) runs "apiclient ephemeral-storage init" and then binds the
// kubelet's directory onto the array: "ephemeral-storage bind" without
// --dirs (the defaults include /var/lib/kubelet) or with it among --dirs.
func bottlerocketEphemeralStorage(v any) bool {
	cmds, _ := v.(map[string]any)
	for _, c := range cmds {
		bc, _ := c.(map[string]any)
		if bc["mode"] == "off" {
			continue
		}
		list, _ := bc["commands"].([]any)
		initDone := false
		for _, cmd := range list {
			words, _ := cmd.([]any)
			var w []string
			for _, x := range words {
				if s, ok := x.(string); ok {
					w = append(w, s)
				}
			}
			if len(w) < 3 || w[0] != "apiclient" || w[1] != "ephemeral-storage" {
				continue
			}
			switch w[2] {
			case "init":
				initDone = true
			case "bind":
				dirs := false
				for i, x := range w[3:] {
					if x == "--dirs" {
						dirs = true
						for _, d := range w[3+i+1:] {
							if d == "/var/lib/kubelet" && initDone {
								return true
							}
						}
					}
				}
				if !dirs && initDone {
					return true
				}
			}
		}
	}
	return false
}
