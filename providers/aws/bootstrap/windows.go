package bootstrap

import (
	"fmt"
	"strings"
)

// windows renders Karpenter's Windows user data: a PowerShell block (the
// user's script first) that runs the EKS Windows image's
// Start-EKSBootstrap.ps1 with the cluster, the CA, the kubelet flags (the
// same as AL2's --kubelet-extra-args) and the cluster DNS IP when
// spec.kubelet.clusterDNS sets one.
func windows(n *node, userData *string) string {
	var b strings.Builder
	b.WriteString("<powershell>\n")
	if userData != nil && *userData != "" {
		b.WriteString(*userData + "\n")
	}
	b.WriteString(`[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\Amazon\EKS\Start-EKSBootstrap.ps1"` + "\n")
	fmt.Fprintf(&b, "& $EKSBootstrapScriptFile -EKSClusterName '%s' -APIServerEndpoint '%s' -Base64ClusterCA '%s'",
		n.cluster.Name, n.cluster.Endpoint, n.cluster.CABundle)
	if args := n.kubeletExtraArgs(); len(args) > 0 {
		fmt.Fprintf(&b, " -KubeletExtraArgs '%s'", strings.Join(args, " "))
	}
	if len(n.kubelet.ClusterDNS) > 0 {
		fmt.Fprintf(&b, " -DNSClusterIP '%s'", n.kubelet.ClusterDNS[0])
	}
	b.WriteString("\n</powershell>")
	return b.String()
}
