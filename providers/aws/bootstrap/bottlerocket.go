package bootstrap

import (
	"strconv"

	"github.com/pelletier/go-toml/v2"
)

// bottlerocket merges our [settings.kubernetes] keys over the user's TOML:
// ours overwrite theirs, node-labels are merged (ours win), node-taints are
// replaced; every other setting of the user's is kept as written.
func bottlerocket(n *node, userData *string) (string, error) {
	doc := map[string]any{}
	if userData != nil {
		if err := toml.Unmarshal([]byte(*userData), &doc); err != nil {
			return "", userDataError("invalid TOML: %v", err)
		}
	}
	settings, err := table(doc, "settings", "settings")
	if err != nil {
		return "", err
	}
	k8s, err := table(settings, "kubernetes", "settings.kubernetes")
	if err != nil {
		return "", err
	}
	k8s["cluster-name"] = n.cluster.Name
	k8s["api-server"] = n.cluster.Endpoint
	k8s["cluster-certificate"] = n.cluster.CABundle
	if n.dnsIP != "" {
		k8s["cluster-dns-ip"] = n.dnsIP
	}
	if n.maxPods > 0 {
		k8s["max-pods"] = int64(n.maxPods)
	}
	labels, err := table(k8s, "node-labels", "settings.kubernetes.node-labels")
	if err != nil {
		return "", err
	}
	for _, l := range n.labels {
		labels[l.k] = l.v
	}
	if len(labels) == 0 {
		delete(k8s, "node-labels")
	}
	taints := map[string]any{}
	for _, t := range n.taints {
		v, _ := taints[t.Key].([]any)
		taints[t.Key] = append(v, t.Value+":"+string(t.Effect))
	}
	k8s["node-taints"] = taints
	k := n.kubelet
	for name, m := range map[string]map[string]string{
		"system-reserved": k.SystemReserved, "kube-reserved": k.KubeReserved,
		"eviction-hard": k.EvictionHard, "eviction-soft": k.EvictionSoft,
	} {
		if m != nil {
			k8s[name] = stringTable(m)
		}
	}
	if k.EvictionSoftGracePeriod != nil {
		g := map[string]any{}
		for s, d := range k.EvictionSoftGracePeriod {
			g[s] = d.Duration.String()
		}
		k8s["eviction-soft-grace-period"] = g
	}
	if k.EvictionMaxPodGracePeriod != nil {
		k8s["eviction-max-pod-grace-period"] = int64(*k.EvictionMaxPodGracePeriod)
	}
	if k.ImageGCHighThresholdPercent != nil {
		k8s["image-gc-high-threshold-percent"] = strconv.Itoa(int(*k.ImageGCHighThresholdPercent))
	}
	if k.ImageGCLowThresholdPercent != nil {
		k8s["image-gc-low-threshold-percent"] = strconv.Itoa(int(*k.ImageGCLowThresholdPercent))
	}
	if k.CPUCFSQuota != nil {
		k8s["cpu-cfs-quota-enforced"] = *k.CPUCFSQuota
	}
	if n.raid0 {
		// Karpenter's command (the form with --dirs works on every
		// Bottlerocket version): RAID0 the instance store, bind the
		// kubelet's, containerd's and the pod logs' directories onto it.
		cmds, err := table(settings, "bootstrap-commands", "settings.bootstrap-commands")
		if err != nil {
			return "", err
		}
		cmds["000-mount-instance-storage"] = map[string]any{
			"commands": []any{
				[]any{"apiclient", "ephemeral-storage", "init"},
				[]any{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
			},
			"essential": true,
			"mode":      "always",
		}
	}
	out, err := toml.Marshal(doc)
	if err != nil {
		return "", userDataError("TOML cannot be written back: %v", err)
	}
	return string(out), nil
}

// table returns m[key] as a table, creating it when absent; a non-table
// value there is the user's error.
func table(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok {
		t := map[string]any{}
		m[key] = t
		return t, nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		return nil, userDataError("%s is a %T, want a table", path, v)
	}
	return t, nil
}

func stringTable(m map[string]string) map[string]any {
	t := make(map[string]any, len(m))
	for k, v := range m {
		t[k] = v
	}
	return t
}
