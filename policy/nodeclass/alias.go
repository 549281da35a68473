package nodeclass

import (
	"fmt"
	"strconv"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

// Image variants an alias resolves, each serving different instance types.
const (
	VariantStandard = "standard"
	VariantNvidia   = "nvidia"
	VariantNeuron   = "neuron"
)

// Parameter is one SSM parameter an alias reads, with the variants the
// image it names serves (one AL2 GPU or Bottlerocket x86_64 image serves
// two).
type Parameter struct {
	Path     string
	Variants []string
}

// Alias is a parsed `family@version` AMI selector term.
type Alias struct {
	Family  string // apiv1.AMIFamily*
	Version string // "latest" or a pinned release such as "v20261101"
}

// ParseAlias parses "al2023@latest", "al2@v20240807", "bottlerocket@v1.20.0".
func ParseAlias(s string) (Alias, error) {
	fam, ver, ok := strings.Cut(s, "@")
	if !ok || ver == "" {
		return Alias{}, fmt.Errorf("alias %q: want family@version, e.g. al2023@latest", s)
	}
	family, ok := aliasFamilies[strings.ToLower(fam)]
	if !ok {
		return Alias{}, fmt.Errorf("alias %q: family %q is not one of al2023, al2, bottlerocket, windows2019, windows2022, windows2025", s, fam)
	}
	if apiv1.WindowsBuilds[family] != "" && ver != "latest" {
		// EKS publishes only the latest Windows image per version.
		return Alias{}, fmt.Errorf("alias %q: a Windows family takes only the version latest", s)
	}
	return Alias{Family: family, Version: ver}, nil
}

var aliasFamilies = map[string]string{
	"al2023":       apiv1.AMIFamilyAL2023,
	"al2":          apiv1.AMIFamilyAL2,
	"bottlerocket": apiv1.AMIFamilyBottlerocket,
	"windows2019":  apiv1.AMIFamilyWindows2019,
	"windows2022":  apiv1.AMIFamilyWindows2022,
	"windows2025":  apiv1.AMIFamilyWindows2025,
}

// ErrUnsupportedAlias is returned for an alias the cluster's Kubernetes
// version has no images for (AL2 ends with 1.32, as for Karpenter).
type ErrUnsupportedAlias struct{ Reason string }

func (e ErrUnsupportedAlias) Error() string { return e.Reason }

// Parameters lists the SSM parameters EKS publishes for the alias on
// Kubernetes version k8s ("1.37"), one per architecture and variant.
func (a Alias) Parameters(k8s string) ([]Parameter, error) {
	switch a.Family {
	case apiv1.AMIFamilyAL2023:
		return a.al2023(k8s), nil
	case apiv1.AMIFamilyAL2:
		if minorAtLeast(k8s, 33) {
			return nil, ErrUnsupportedAlias{Reason: fmt.Sprintf("alias al2@%s: Amazon Linux 2 has no EKS images for Kubernetes %s (1.32 was the last); use al2023", a.Version, k8s)}
		}
		return a.al2(k8s), nil
	case apiv1.AMIFamilyBottlerocket:
		return a.bottlerocket(k8s), nil
	case apiv1.AMIFamilyWindows2019, apiv1.AMIFamilyWindows2022, apiv1.AMIFamilyWindows2025:
		return a.windows(k8s)
	}
	return nil, fmt.Errorf("alias family %q has no SSM parameters", a.Family)
}

func (a Alias) al2023(k8s string) []Parameter {
	var out []Parameter
	for _, av := range []struct{ arch, variant string }{
		{"x86_64", VariantStandard}, {"x86_64", VariantNvidia}, {"x86_64", VariantNeuron},
		{"arm64", VariantStandard}, {"arm64", VariantNvidia},
	} {
		leaf := "recommended"
		if a.Version != "latest" {
			leaf = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", av.arch, av.variant, k8s, a.Version)
		}
		out = append(out, Parameter{
			Path:     fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8s, av.arch, av.variant, leaf),
			Variants: []string{av.variant},
		})
	}
	return out
}

func (a Alias) al2(k8s string) []Parameter {
	var out []Parameter
	for _, p := range []struct {
		dir, node string
		variants  []string
	}{
		{"amazon-linux-2", "amazon-eks-node", []string{VariantStandard}},
		{"amazon-linux-2-arm64", "amazon-eks-arm64-node", []string{VariantStandard}},
		{"amazon-linux-2-gpu", "amazon-eks-gpu-node", []string{VariantNvidia, VariantNeuron}},
	} {
		leaf := "recommended"
		if a.Version != "latest" {
			leaf = fmt.Sprintf("%s-%s-%s", p.node, k8s, a.Version)
		}
		out = append(out, Parameter{Path: fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/%s/image_id", k8s, p.dir, leaf), Variants: p.variants})
	}
	return out
}

func (a Alias) bottlerocket(k8s string) []Parameter {
	ver := a.Version
	if ver != "latest" {
		ver = strings.TrimPrefix(ver, "v")
	}
	var out []Parameter
	for _, p := range []struct {
		suffix, arch string
		variants     []string
	}{
		{"", "x86_64", []string{VariantStandard, VariantNeuron}},
		{"", "arm64", []string{VariantStandard}},
		{"-nvidia", "x86_64", []string{VariantNvidia}},
		{"-nvidia", "arm64", []string{VariantNvidia}},
	} {
		out = append(out, Parameter{Path: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id", k8s, p.suffix, p.arch, ver), Variants: p.variants})
	}
	return out
}

// windows is the one Core image EKS publishes per Windows Server version
// (x86_64 only); Windows Server 2025 has EKS images from Kubernetes 1.35.
func (a Alias) windows(k8s string) ([]Parameter, error) {
	year := strings.TrimPrefix(a.Family, "Windows")
	if a.Family == apiv1.AMIFamilyWindows2025 && !minorAtLeast(k8s, 35) {
		return nil, ErrUnsupportedAlias{Reason: fmt.Sprintf("alias windows2025@latest: Windows Server 2025 has EKS images from Kubernetes 1.35, the cluster runs %s", k8s)}
	}
	return []Parameter{{
		Path:     fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", year, k8s),
		Variants: []string{WindowsVariant(apiv1.WindowsBuilds[a.Family])},
	}}, nil
}

// WindowsVariant names the variant of a Windows image of the OS build: it
// serves only kubernetes.io/os=windows types of that build.
func WindowsVariant(build string) string { return windowsVariantPrefix + build }

const windowsVariantPrefix = "windows/"

// minorAtLeast reports whether version "1.N" has N >= min.
func minorAtLeast(version string, min int) bool {
	_, minor, ok := strings.Cut(version, ".")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(minor)
	return err == nil && n >= min
}

// VariantRequirements are what a variant asks of an instance type, as
// Karpenter sets them: standard images serve types without GPUs or
// accelerators, nvidia ones GPU types, neuron ones accelerator types.
func VariantRequirements(variant string) []corev1.NodeSelectorRequirement {
	if build, ok := strings.CutPrefix(variant, windowsVariantPrefix); ok {
		return []corev1.NodeSelectorRequirement{
			{Key: apiv1.LabelOS, Operator: corev1.NodeSelectorOpIn, Values: []string{"windows"}},
			{Key: apiv1.LabelWindowsBuild, Operator: corev1.NodeSelectorOpIn, Values: []string{build}},
		}
	}
	switch variant {
	case VariantNvidia:
		return []corev1.NodeSelectorRequirement{{Key: apiv1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpExists}}
	case VariantNeuron:
		return []corev1.NodeSelectorRequirement{{Key: apiv1.LabelInstanceAccCount, Operator: corev1.NodeSelectorOpExists}}
	}
	return []corev1.NodeSelectorRequirement{
		{Key: apiv1.LabelInstanceAccCount, Operator: corev1.NodeSelectorOpDoesNotExist},
		{Key: apiv1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist},
	}
}
