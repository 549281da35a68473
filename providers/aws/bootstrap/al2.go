package bootstrap

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
)

// al2 renders the MIME document: the user's parts (a non-MIME script as one
// shell part), then the bootstrap.sh invocation.
func al2(n *node, userData *string) (string, error) {
	var parts []part
	if userData != nil && strings.TrimSpace(*userData) != "" {
		if isMIME(*userData) {
			var err error
			if parts, err = parseMIME(*userData); err != nil {
				return "", err
			}
		} else {
			parts = []part{newPart(contentTypeShellScript, *userData)}
		}
	}
	return serializeMIME(append(parts, newPart(contentTypeShellScript, n.bootstrapScript())))
}

// bootstrapScript is Karpenter's AL2 script: bootstrap.sh takes its values
// as separate words (no "="); kubelet flags go through --kubelet-extra-args.
func (n *node) bootstrapScript() string {
	var b strings.Builder
	b.WriteString("#!/bin/bash -xe\n")
	b.WriteString("exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n")
	fmt.Fprintf(&b, "/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s' --b64-cluster-ca '%s'", n.cluster.Name, n.cluster.Endpoint, n.cluster.CABundle)
	if n.dnsIP != "" {
		if net.ParseIP(n.dnsIP).To4() == nil {
			b.WriteString(" \\\n--ip-family ipv6")
		}
		fmt.Fprintf(&b, " \\\n--dns-cluster-ip '%s'", n.dnsIP)
	}
	if n.maxPods > 0 {
		b.WriteString(" \\\n--use-max-pods false")
	}
	fmt.Fprintf(&b, " \\\n--kubelet-extra-args '%s'", strings.Join(n.kubeletExtraArgs(), " "))
	if n.raid0 {
		b.WriteString(" \\\n--local-disks raid0")
	}
	return b.String()
}

func (n *node) kubeletExtraArgs() []string {
	var args []string
	if l := n.nodeLabelsFlag(); l != "" {
		args = append(args, l)
	}
	taints := make([]string, len(n.taints))
	for i, t := range n.taints {
		taints[i] = t.ToString()
	}
	args = append(args, fmt.Sprintf("--register-with-taints=%q", strings.Join(taints, ",")))
	k := n.kubelet
	if n.maxPods > 0 {
		args = append(args, fmt.Sprintf("--max-pods=%d", n.maxPods))
	}
	if k.PodsPerCore != nil {
		args = append(args, fmt.Sprintf("--pods-per-core=%d", *k.PodsPerCore))
	}
	args = appendMapArg(args, "--system-reserved", k.SystemReserved, "=")
	args = appendMapArg(args, "--kube-reserved", k.KubeReserved, "=")
	args = appendMapArg(args, "--eviction-hard", k.EvictionHard, "<")
	args = appendMapArg(args, "--eviction-soft", k.EvictionSoft, "<")
	if len(k.EvictionSoftGracePeriod) > 0 {
		g := map[string]string{}
		for s, d := range k.EvictionSoftGracePeriod {
			g[s] = d.Duration.String()
		}
		args = appendMapArg(args, "--eviction-soft-grace-period", g, "=")
	}
	if k.EvictionMaxPodGracePeriod != nil {
		args = append(args, fmt.Sprintf("--eviction-max-pod-grace-period=%d", *k.EvictionMaxPodGracePeriod))
	}
	if k.ImageGCHighThresholdPercent != nil {
		args = append(args, fmt.Sprintf("--image-gc-high-threshold=%d", *k.ImageGCHighThresholdPercent))
	}
	if k.ImageGCLowThresholdPercent != nil {
		args = append(args, fmt.Sprintf("--image-gc-low-threshold=%d", *k.ImageGCLowThresholdPercent))
	}
	if k.CPUCFSQuota != nil {
		args = append(args, fmt.Sprintf("--cpu-cfs-quota=%t", *k.CPUCFSQuota))
	}
	return args
}

// appendMapArg adds name="k<sep>v,..." (sorted) when m is not empty.
func appendMapArg(args []string, name string, m map[string]string, sep string) []string {
	if len(m) == 0 {
		return args
	}
	var s []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s = append(s, k+sep+m[k])
	}
	return append(args, fmt.Sprintf("%s=%q", name, strings.Join(s, ",")))
}
