package kubelet

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

func TestFamilyOfImage(t *testing.T) {
	for name, want := range map[string]Family{
		"amazon-eks-node-al2023-x86_64-standard-1.37-v20261101":          FamilyAL2023,
		"amazon-eks-node-al2023-arm64-nvidia-1.37-v20261101":             FamilyAL2023,
		"amazon-eks-node-1.37-v20261101":                                 FamilyAL2,
		"amazon-eks-arm64-node-1.37-v20261101":                           FamilyAL2,
		"amazon-eks-gpu-node-1.37-v20261101":                             FamilyAL2,
		"bottlerocket-aws-k8s-1.37-x86_64-v1.50.0-0a1b2c3d":              FamilyBottlerocket,
		"bottlerocket-aws-k8s-1.37-nvidia-arm64-v1.50.0-0a1b2c":          FamilyBottlerocket,
		"Windows_Server-2022-English-Core-EKS_Optimized-1.37-2026.11.01": FamilyWindows,
		"Windows_Server-2022-English-Full-Base-2026.11.01":               FamilyCustom,
		"my-golden-image-2026":                                           FamilyCustom,
		"":                                                               FamilyCustom,
	} {
		if got := FamilyOfImage(name); got != want {
			t.Errorf("FamilyOfImage(%q) = %s, want %s", name, got, want)
		}
	}
}

// imageNamed makes r's images all of one family.
func imageNamed(name string) func(string) (Image, bool) {
	return func(string) (Image, bool) { return Image{Arch: "x86_64", Variant: "standard", Name: name}, true }
}

var familyImages = map[string]string{
	apiv1.AMIFamilyAL2023:       "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101",
	apiv1.AMIFamilyAL2:          "amazon-eks-node-1.37-v20261101",
	apiv1.AMIFamilyBottlerocket: "bottlerocket-aws-k8s-1.37-x86_64-v1.50.0-0a1b2c3d",
	apiv1.AMIFamilyWindows2022:  "Windows_Server-2022-English-Core-EKS_Optimized-1.37-2026.11.01",
}

// Each family's image boots the user data Joinery writes for it, and
// none of the others': the node never joins, and the error says why.
func TestEachFamilyBootsOnlyItsOwnUserData(t *testing.T) {
	ca := newCA(t, "cluster")
	want := map[[2]string]string{ // image family, user data family → error part ("" joins)
		{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2}:                "could not find NodeConfig within UserData",
		{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyBottlerocket}:       "nodeadm init failed",
		{apiv1.AMIFamilyAL2, apiv1.AMIFamilyAL2023}:                "no script calls /etc/eks/bootstrap.sh",
		{apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket}:          "no script calls /etc/eks/bootstrap.sh",
		{apiv1.AMIFamilyBottlerocket, apiv1.AMIFamilyAL2023}:       "not TOML",
		{apiv1.AMIFamilyBottlerocket, apiv1.AMIFamilyAL2}:          "not TOML",
		{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2023}:             "",
		{apiv1.AMIFamilyAL2, apiv1.AMIFamilyAL2}:                   "",
		{apiv1.AMIFamilyBottlerocket, apiv1.AMIFamilyBottlerocket}: "",
		{apiv1.AMIFamilyWindows2022, apiv1.AMIFamilyAL2}:           "no <powershell> block",
		{apiv1.AMIFamilyAL2, apiv1.AMIFamilyWindows2022}:           "no script calls /etc/eks/bootstrap.sh",
		{apiv1.AMIFamilyWindows2022, apiv1.AMIFamilyWindows2022}:   "",
	}
	for k, msg := range want {
		r, kc := registrar(t, ca)
		r.Image = imageNamed(familyImages[k[0]])
		err := r.Register(context.Background(), instance("m5.large", generate(t, options(k[1], ca))))
		if msg == "" {
			if err != nil || len(nodes(t, kc)) != 1 {
				t.Errorf("%s image, %s user data: %v, %d nodes; want it to join", k[0], k[1], err, len(nodes(t, kc)))
			}
			continue
		}
		if !errors.Is(err, ErrNotJoined) || !strings.Contains(err.Error(), msg) || len(nodes(t, kc)) != 0 {
			t.Errorf("%s image, %s user data: %v, %d nodes; want ErrNotJoined with %q", k[0], k[1], err, len(nodes(t, kc)), msg)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestNodeAgentsRefuseWhatTheyDoNotRun(t *testing.T) {
	ca := b64(string(newCA(t, "cluster")))
	bootstrapSh := "/etc/eks/bootstrap.sh local --apiserver-endpoint " + endpoint + " --b64-cluster-ca " + ca + "\n"
	nodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: local\n    apiServerEndpoint: " + endpoint +
		"\n    certificateAuthority: " + ca + "\n    cidr: 10.96.0.0/12\n"
	mime := func(ct, body string) string {
		return "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: " + ct + "\n\n" + body + "\n--B--\n"
	}
	brK8s := "[settings.kubernetes]\ncluster-name = 'local'\napi-server = '" + endpoint + "'\ncluster-certificate = '" + ca + "'\n"
	for _, tc := range []struct {
		family   Family
		userData string
		err      string // "" joins
	}{
		{FamilyAL2023, mime("application/node.eks.aws", nodeConfig), ""},
		{FamilyAL2023, nodeConfig, ""},
		{FamilyAL2023, "#!/bin/bash\n" + bootstrapSh, "nodeadm init failed"},
		{FamilyAL2023, mime("text/x-shellscript", "#!/bin/bash\n"+bootstrapSh), "could not find NodeConfig"},
		{FamilyAL2, "#!/bin/bash\n" + bootstrapSh, ""},
		{FamilyAL2, mime("text/x-shellscript", "#!/bin/bash\n"+bootstrapSh), ""},
		{FamilyAL2, bootstrapSh, "nothing starts the kubelet"}, // no #!: cloud-init does not run it
		{FamilyAL2, mime("application/node.eks.aws", nodeConfig), "nothing starts the kubelet"},
		{FamilyBottlerocket, brK8s, ""},
		{FamilyBottlerocket, brK8s + "[settings.host-containers.admin]\nenabled = true\n[settings.kernel.sysctl]\n'vm.max_map_count' = '262144'\n", ""},
		{FamilyBottlerocket, brK8s + "[settings.kubelet]\nmax-pods = 20\n", "unknown settings [settings.kubelet]"},
		{FamilyBottlerocket, brK8s + "[other]\nx = 1\n", `unknown top-level key "other"`},
		{FamilyBottlerocket, "#!/bin/bash\n" + bootstrapSh, "not TOML"},
		{FamilyCustom, "#!/bin/bash\n" + bootstrapSh, ""},
		{FamilyCustom, brK8s, ""},
		{FamilyWindows, "<powershell>\nWrite-Host hi\n</powershell>", "does not run Start-EKSBootstrap.ps1"},
		{FamilyWindows, "<powershell>\n& $EKSBootstrapScriptFile -EKSClusterName 'local' -APIServerEndpoint '" + endpoint + "'\n</powershell>", "-Base64ClusterCA"},
		{FamilyWindows, "<powershell>\n& $EKSBootstrapScriptFile -EKSClusterName 'local' -APIServerEndpoint '" + endpoint + "' -Base64ClusterCA '" + ca + "' -KubeletExtraArgs '--max-pods=5'\n</powershell>", ""},
	} {
		_, err := ParseUserDataFor(tc.family, b64(tc.userData))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %.40q: %v, want it to join", tc.family, tc.userData, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %.40q: %v, want an error with %q", tc.family, tc.userData, err, tc.err)
		}
	}
}

// A Windows image's node: os windows with its build, and one interface's
// addresses as its pod limit (m5.large: 10 - 1), not the Linux ENI count.
func TestWindowsNodeRegisters(t *testing.T) {
	ca := newCA(t, "cluster")
	r, kc := registrar(t, ca)
	r.Image = imageNamed(familyImages[apiv1.AMIFamilyWindows2022])
	o := options(apiv1.AMIFamilyWindows2022, ca)
	o.Kubelet.MaxPods, o.MaxPods = nil, 0 // the node's own limit
	if err := r.Register(context.Background(), instance("m5.large", generate(t, o))); err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	if n.Labels[apiv1.LabelOS] != "windows" || n.Labels[apiv1.LabelWindowsBuild] != "10.0.20348" || n.Status.NodeInfo.OperatingSystem != "windows" {
		t.Errorf("labels %v, OS %q", n.Labels, n.Status.NodeInfo.OperatingSystem)
	}
	if pods := n.Status.Capacity.Pods().Value(); pods != 9 {
		t.Errorf("pods %d, want 9", pods)
	}
}
