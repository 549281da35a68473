package kubelet

import (
	"errors"
	"fmt"
	"strings"
)

// FormatWindows is the EKS Windows images' user data: a <powershell> block
// that runs Start-EKSBootstrap.ps1.
const FormatWindows = "Windows"

// windowsBuilds are the OS builds of EKS's Windows images, by the image
// name's "Windows_Server-<year>-" prefix.
var windowsBuilds = map[string]string{"2019": "10.0.17763", "2022": "10.0.20348", "2025": "10.0.26100"}

// windowsBuildOf is the OS build of an EKS Windows image ("" for another
// image).
func windowsBuildOf(imageName string) string {
	year, ok := strings.CutPrefix(imageName, "Windows_Server-")
	if !ok || len(year) < 4 {
		return ""
	}
	return windowsBuilds[year[:4]]
}

// windowsUserData: EC2Launch runs the <powershell> block; only a call of
// Start-EKSBootstrap.ps1 starts the kubelet, with its named parameters.
// Shell scripts, NodeConfig and TOML mean nothing to a Windows image.
func windowsUserData(raw []byte) (*BootConfig, error) {
	s := string(raw)
	start, end := strings.Index(s, "<powershell>"), strings.LastIndex(s, "</powershell>")
	if start < 0 || end < start {
		return nil, errors.New("no <powershell> block: EC2Launch runs nothing and the kubelet never starts")
	}
	for _, line := range strings.Split(s[start+len("<powershell>"):end], "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "& $EKSBootstrapScriptFile ") || strings.Contains(line, `Start-EKSBootstrap.ps1'`) {
			return parseEKSBootstrapPS(strings.TrimPrefix(line, "& $EKSBootstrapScriptFile "))
		}
	}
	return nil, errors.New("the <powershell> block does not run Start-EKSBootstrap.ps1")
}

// parseEKSBootstrapPS reads Start-EKSBootstrap.ps1's parameters (-Name
// 'value', single-quoted as PowerShell quotes them).
func parseEKSBootstrapPS(args string) (*BootConfig, error) {
	params, err := psParams(args)
	if err != nil {
		return nil, fmt.Errorf("Start-EKSBootstrap.ps1: %v", err)
	}
	c := &BootConfig{Format: FormatWindows, ClusterName: params["eksclustername"], Endpoint: params["apiserverendpoint"],
		CABundle: params["base64clusterca"]}
	if c.ClusterName == "" || c.Endpoint == "" || c.CABundle == "" {
		// The real script would call eks:DescribeCluster for the missing
		// ones; the local world's nodes have no credentials for that.
		return nil, errors.New("Start-EKSBootstrap.ps1: -EKSClusterName, -APIServerEndpoint and -Base64ClusterCA are required")
	}
	if ip := params["dnsclusterip"]; ip != "" {
		c.ClusterDNS = []string{ip}
	}
	extra, err := shellWords(params["kubeletextraargs"])
	if err != nil {
		return nil, fmt.Errorf("Start-EKSBootstrap.ps1 -KubeletExtraArgs: %v", err)
	}
	if err := c.applyKubeletFlags(extra); err != nil {
		return nil, fmt.Errorf("Start-EKSBootstrap.ps1 -KubeletExtraArgs: %v", err)
	}
	return c, nil
}

// psParams reads PowerShell's -Name 'value' pairs (a doubled quote in a
// value is one quote) into lower-cased names and values.
func psParams(s string) (map[string]string, error) {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] != '-' {
			return nil, fmt.Errorf("want -Parameter at %q", s)
		}
		name, rest, _ := strings.Cut(s[1:], " ")
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, "'") {
			return nil, fmt.Errorf("-%s: want a single-quoted value", name)
		}
		var v strings.Builder
		i := 1
		for ; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					v.WriteByte('\'')
					i++
					continue
				}
				break
			}
			v.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return nil, fmt.Errorf("-%s: unterminated string", name)
		}
		out[strings.ToLower(name)] = v.String()
		s = rest[i+1:]
	}
	return out, nil
}
