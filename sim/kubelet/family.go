package kubelet

// Each EKS image runs one node agent, which reads the user data its own
// way; user data meant for another agent leaves the kubelet unstarted.
//
//   - AL2023: nodeadm reads MIME multi-part user data's NodeConfig parts,
//     or the whole of it as one NodeConfig; MIME without a NodeConfig part
//     fails ("could not find NodeConfig within UserData"). cloud-init runs
//     shell parts, but the image has no /etc/eks/bootstrap.sh.
//   - AL2: cloud-init runs the shell script (alone or a MIME part); only a
//     /etc/eks/bootstrap.sh call starts the kubelet. NodeConfig parts and
//     TOML mean nothing to it.
//   - Bottlerocket: early-boot-config reads TOML settings only, and the
//     settings API refuses keys its model does not have.
//   - Windows: EC2Launch runs the <powershell> block; only a call of
//     Start-EKSBootstrap.ps1 starts the kubelet.
//   - Any other image: a custom AMI; whatever the user data holds is taken
//     as it is (ParseUserData).

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Family is the OS family of a booted image.
type Family string

// Families the node knows by its image.
const (
	FamilyAL2023       Family = "AL2023"
	FamilyAL2          Family = "AL2"
	FamilyBottlerocket Family = "Bottlerocket"
	FamilyWindows      Family = "Windows"
	FamilyCustom       Family = "custom"
)

// FamilyOfImage tells an EKS-optimized image's family from its name as
// DescribeImages shows it (amazon-eks-node-al2023-..., amazon-eks-node-1.x-...,
// amazon-eks-arm64-node-..., amazon-eks-gpu-node-..., bottlerocket-aws-k8s-...);
// any other name is a custom image.
func FamilyOfImage(name string) Family {
	switch {
	case strings.HasPrefix(name, "amazon-eks-node-al2023-"):
		return FamilyAL2023
	case strings.HasPrefix(name, "amazon-eks-node-"), strings.HasPrefix(name, "amazon-eks-arm64-node-"),
		strings.HasPrefix(name, "amazon-eks-gpu-node-"):
		return FamilyAL2
	case strings.HasPrefix(name, "bottlerocket-aws-k8s-"):
		return FamilyBottlerocket
	case windowsBuildOf(name) != "" && strings.Contains(name, "-EKS_Optimized-"):
		return FamilyWindows
	}
	return FamilyCustom
}

// ParseUserDataFor reads user data as the node agent of an image of that
// family does; an error means the kubelet never starts.
func ParseUserDataFor(f Family, b64 string) (*BootConfig, error) {
	if f == FamilyCustom || f == "" {
		return ParseUserData(b64)
	}
	raw, err := decodeUserData(b64)
	if err != nil {
		return nil, err
	}
	switch f {
	case FamilyAL2023:
		return nodeadmUserData(raw)
	case FamilyAL2:
		return al2UserData(raw)
	case FamilyBottlerocket:
		return bottlerocketUserData(raw)
	case FamilyWindows:
		return windowsUserData(raw)
	}
	return nil, fmt.Errorf("unknown image family %q", f)
}

// nodeadmUserData: nodeadm init's user data provider.
func nodeadmUserData(raw []byte) (*BootConfig, error) {
	parts, ok, err := multipartParts(raw)
	if !ok {
		c, err := parseNodeadm([][]byte{raw})
		if err != nil {
			return nil, fmt.Errorf("nodeadm init failed: %v", err)
		}
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nodeadm init failed: %v", err)
	}
	var docs [][]byte
	for _, p := range parts {
		if p.mediaType == "application/node.eks.aws" {
			docs = append(docs, p.body)
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("nodeadm init failed: could not find NodeConfig within UserData")
	}
	return parseNodeadm(docs)
}

// al2UserData: cloud-init runs the scripts; bootstrap.sh starts the kubelet.
func al2UserData(raw []byte) (*BootConfig, error) {
	parts, ok, err := multipartParts(raw)
	if err != nil {
		return nil, fmt.Errorf("cloud-init: %v", err)
	}
	scripts := []string{string(raw)}
	if ok {
		scripts = scripts[:0]
		for _, p := range parts {
			if p.mediaType == "text/x-shellscript" {
				scripts = append(scripts, string(p.body))
			}
		}
	}
	for _, s := range scripts {
		if !ok && !strings.HasPrefix(s, "#!") {
			break // cloud-init runs only a script that starts with #!
		}
		if line, found := bootstrapShLine(s); found {
			return parseBootstrapSh(line)
		}
	}
	return nil, errors.New("no script calls /etc/eks/bootstrap.sh: nothing starts the kubelet")
}

// bottlerocketUserData: early-boot-config's TOML, checked against the
// settings model.
func bottlerocketUserData(raw []byte) (*BootConfig, error) {
	var doc map[string]any
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("early-boot-config: user data is not TOML: %v", err)
	}
	for k := range doc {
		if k != "settings" {
			return nil, fmt.Errorf("early-boot-config: unknown top-level key %q (only settings)", k)
		}
	}
	settings, _ := doc["settings"].(map[string]any)
	var unknown []string
	for k := range settings {
		if !bottlerocketSettings[k] {
			unknown = append(unknown, "settings."+k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("early-boot-config: the settings API refuses unknown settings %v", unknown)
	}
	return parseBottlerocket(doc)
}

// bottlerocketSettings are the top-level settings of the aws-k8s variants'
// model (bottlerocket sources/models, aws-k8s-1.30 and later, with the
// bootstrap commands of 1.32+ and the nvidia variants' device plugins).
var bottlerocketSettings = map[string]bool{
	"motd": true, "kubernetes": true, "updates": true, "host-containers": true, "bootstrap-containers": true,
	"bootstrap-commands": true, "ntp": true, "network": true, "kernel": true, "boot": true, "aws": true,
	"metrics": true, "pki": true, "container-registry": true, "oci-defaults": true, "oci-hooks": true,
	"cloudformation": true, "dns": true, "container-runtime": true, "container-runtime-plugins": true,
	"autoscaling": true, "kubelet-device-plugins": true, "nvidia-container-runtime": true,
}
