package bootstrap

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Regenerate with JOINERY_UPDATE_GOLDEN=1 go test ./cloud/bootstrap/
var updateGolden = os.Getenv("JOINERY_UPDATE_GOLDEN") == "1"

const testCA = "-----BEGIN CERTIFICATE-----\nMIIBdTCCARugAwIBAgIBATAKBggqhkjOPQQDAjAAMB4XDTI1MDEwMTAwMDAwMFoX\n-----END CERTIFICATE-----\n"

func ptr[T any](v T) *T { return &v }

func testCluster() Cluster {
	return Cluster{
		Name:        "test-cluster",
		Endpoint:    "https://127.0.0.1:16443",
		CABundle:    base64.StdEncoding.EncodeToString([]byte(testCA)),
		ServiceCIDR: "10.100.0.0/16",
		DNSIP:       "10.100.0.10",
	}
}

func testOptions(family string, userData *string) Options {
	return Options{
		Family:  family,
		Cluster: testCluster(),
		Labels: map[string]string{
			apiv1.LabelNodePool:                "general-purpose",
			"karpenter.k8s.aws/ec2nodeclass":   "default",
			apiv1.LabelCapacityType:            "spot",
			apiv1.LabelInstanceType:            "m5.large",
			"team":                             "platform",
			"kubernetes.io/role":               "worker",        // refused by the kubelet: dropped
			"node-restriction.kubernetes.io/x": "y",             // refused: dropped
			"example.k8s.io/tier":              "gold",          // refused: dropped
			"kubelet.kubernetes.io/pool":       "a",             // allowed namespace
			"topology.kubernetes.io/zone":      "us-east-1a",    // allowed
			"node.kubernetes.io/lifecycle":     "spot-instance", // allowed namespace
		},
		Taints: []corev1.Taint{
			{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute},
			{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule}, // same key+effect: dropped
		},
		Kubelet: &apiv1.KubeletConfiguration{
			MaxPods:                     ptr(intstr.FromInt32(58)),
			KubeReserved:                map[string]string{"cpu": "200m", "memory": "1Gi", "ephemeral-storage": "2Gi"},
			SystemReserved:              map[string]string{"cpu": "100m", "memory": "256Mi"},
			EvictionHard:                map[string]string{"memory.available": "5%", "nodefs.available": "10%"},
			EvictionSoft:                map[string]string{"memory.available": "10%"},
			EvictionSoftGracePeriod:     map[string]metav1.Duration{"memory.available": {Duration: 90 * time.Second}},
			EvictionMaxPodGracePeriod:   ptr(int32(60)),
			ImageGCHighThresholdPercent: ptr(int32(85)),
			ImageGCLowThresholdPercent:  ptr(int32(80)),
			CPUCFSQuota:                 ptr(true),
		},
		MaxPods:  29, // ignored: spec.kubelet.maxPods is set
		UserData: userData,
	}
}

// passthroughOptions is an AL2023 class's spec.kubelet with fields
// Joinery does not type and its expressions resolved for m5.large
// (maxPods "min(max_pods, 30)", kubeReserved cpu "vcpus * 30" and memory
// "memory_mib / 100"): every field reaches nodeadm's kubelet config.
func passthroughOptions(t *testing.T) Options {
	o := minimalOptions(apiv1.AMIFamilyAL2023, nil)
	o.Kubelet = &apiv1.KubeletConfiguration{}
	err := json.Unmarshal([]byte(`{"maxPods":29,"kubeReserved":{"cpu":"60m","memory":"96Mi"},"serializeImagePulls":false,`+
		`"featureGates":{"InPlacePodVerticalScaling":true},"containerLogMaxSize":"20Mi","shutdownGracePeriod":"30s"}`), o.Kubelet)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func minimalOptions(family string, userData *string) Options {
	return Options{
		Family:   family,
		Cluster:  testCluster(),
		Labels:   map[string]string{apiv1.LabelNodePool: "default", apiv1.LabelCapacityType: "on-demand"},
		MaxPods:  29,
		UserData: userData,
	}
}

// raid0 is o with spec.instanceStorePolicy RAID0.
func raid0(o Options) Options {
	o.RAID0 = true
	return o
}

const userShell = "#!/bin/bash\necho \"Running custom user data script\"\n"

const userMIME = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      maxPods: 42
      shutdownGracePeriod: 30s
--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo "Hello, AL2023!"
--BOUNDARY--
`

const userMIMEAL2 = `Content-Type: multipart/mixed; boundary="==BOUNDARY=="
MIME-Version: 1.0

--==BOUNDARY==
Content-Type: text/cloud-config; charset="us-ascii"

#cloud-config
packages:
- jq
--==BOUNDARY==
Content-Type: text/x-shellscript; charset="us-ascii"
Content-Transfer-Encoding: 7bit

#!/bin/bash
echo "AL2 custom part"

--==BOUNDARY==--
`

const userNodeConfig = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      maxPods: 42
`

const userTOML = `[settings.kubernetes]
api-server = 'replaceme'
cloud-provider = 'external'
cluster-name = 'replaceme'
max-pods = 9999

[settings.kubernetes.eviction-hard]
"memory.available" = "12%"

[settings.kubernetes.node-labels]
"custom-node-label" = "custom"
"karpenter.sh/nodepool" = "should-be-overridden"

[settings.kubernetes.node-taints]
"replace" = ["me:NoSchedule"]

[settings.network]
hostname = "test.local"
no-proxy = ["localhost", "127.0.0.1"]

[settings.ntp]
time-servers = ["169.254.169.123"]
`

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"al2023", testOptions(apiv1.AMIFamilyAL2023, nil)},
		{"al2023_minimal", minimalOptions(apiv1.AMIFamilyAL2023, nil)},
		{"al2023_shell_userdata", testOptions(apiv1.AMIFamilyAL2023, ptr(userShell))},
		{"al2023_mime_userdata", testOptions(apiv1.AMIFamilyAL2023, ptr(userMIME))},
		{"al2023_yaml_userdata", minimalOptions(apiv1.AMIFamilyAL2023, ptr(userNodeConfig))},
		{"al2", testOptions(apiv1.AMIFamilyAL2, nil)},
		{"al2_minimal", minimalOptions(apiv1.AMIFamilyAL2, nil)},
		{"al2_shell_userdata", testOptions(apiv1.AMIFamilyAL2, ptr(userShell))},
		{"al2_mime_userdata", minimalOptions(apiv1.AMIFamilyAL2, ptr(userMIMEAL2))},
		{"bottlerocket", testOptions(apiv1.AMIFamilyBottlerocket, nil)},
		{"bottlerocket_minimal", minimalOptions(apiv1.AMIFamilyBottlerocket, nil)},
		{"bottlerocket_userdata", testOptions(apiv1.AMIFamilyBottlerocket, ptr(userTOML))},
		{"custom", testOptions(apiv1.AMIFamilyCustom, ptr(userShell))},
		{"al2023_raid0", raid0(minimalOptions(apiv1.AMIFamilyAL2023, nil))},
		{"al2_raid0", raid0(minimalOptions(apiv1.AMIFamilyAL2, nil))},
		{"bottlerocket_raid0", raid0(minimalOptions(apiv1.AMIFamilyBottlerocket, nil))},
		{"windows2022", testOptions(apiv1.AMIFamilyWindows2022, ptr("Write-Host 'hello'"))},
		{"windows2019_minimal", minimalOptions(apiv1.AMIFamilyWindows2019, nil)},
		{"al2023_kubelet_passthrough", passthroughOptions(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b64, err := Generate(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatalf("output is not base64: %v", err)
			}
			// Deterministic: map iteration order must not show.
			for i := 0; i < 5; i++ {
				again, err := Generate(tc.o)
				if err != nil || again != b64 {
					t.Fatalf("run %d differs (err %v)", i, err)
				}
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if updateGolden {
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate with JOINERY_UPDATE_GOLDEN=1)", err)
			}
			if string(raw) != string(want) {
				t.Errorf("%s differs from the golden file (JOINERY_UPDATE_GOLDEN=1 to accept)\n--- got\n%s\n--- want\n%s", path, raw, want)
			}
		})
	}
}

func TestCustomWithoutUserDataIsEmpty(t *testing.T) {
	got, err := Generate(Options{Family: apiv1.AMIFamilyCustom})
	if err != nil || got != "" {
		t.Fatalf("got %q, %v; want empty", got, err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"bad family", func(o *Options) { o.Family = "Ubuntu" }, `amiFamily "Ubuntu": not supported`},
		{"unparsable MIME", func(o *Options) { o.UserData = ptr("MIME-Version: 1.0\nContent-Type: text/plain\n\nhi") }, "spec.userData: MIME document is text/plain, not multipart"},
		{"MIME without boundary", func(o *Options) { o.UserData = ptr("Content-Type: multipart/mixed\n\n--x\n") }, "spec.userData: multipart MIME document without a boundary"},
		{"broken MIME part", func(o *Options) {
			o.UserData = ptr("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/x-shellscript\n\necho hi\n")
		}, "spec.userData: MIME part 1"},
		{"NodeConfig that does not parse", func(o *Options) {
			o.UserData = ptr("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: [a, b]\n")
		}, "spec.userData: part 1 (application/node.eks.aws): NodeConfig does not parse"},
		{"NodeConfig wrong kind", func(o *Options) { o.UserData = ptr("apiVersion: v1\nkind: ConfigMap\n") }, `spec.userData: part 1 (application/node.eks.aws): apiVersion "v1", kind "ConfigMap"`},
		{"NodeConfig part in MIME that does not parse", func(o *Options) {
			o.UserData = ptr(strings.Replace(userMIME, "maxPods: 42", "maxPods: [", 1))
		}, "spec.userData: part 1 (application/node.eks.aws): NodeConfig does not parse"},
		{"boundary inside a script", func(o *Options) { o.UserData = ptr("#!/bin/sh\n--//\n") }, `spec.userData: part 1 has a line starting with the MIME boundary "--//"`},
		{"missing CIDR", func(o *Options) { o.Cluster.ServiceCIDR = "" }, "cluster service CIDR: required for AL2023"},
		{"CA not base64", func(o *Options) { o.Cluster.CABundle = "not base64!" }, "cluster CA bundle: not base64"},
		{"endpoint not https", func(o *Options) { o.Cluster.Endpoint = "http://x" }, `cluster endpoint "http://x": must be an https:// URL`},
		{"endpoint with a quote", func(o *Options) { o.Cluster.Endpoint = "https://x'; rm -rf /'" }, "must be an https:// URL"},
		{"label value with a quote", func(o *Options) { o.Labels["a"] = "b'c" }, `label a="b'c": not a valid label value`},
		{"taint bad effect", func(o *Options) { o.Taints = []corev1.Taint{{Key: "a", Effect: "Sometimes"}} }, `taints[0]: effect "Sometimes"`},
		{"reserved value with space", func(o *Options) { o.Kubelet.KubeReserved["cpu"] = "1 --x" }, `spec.kubelet.kubeReserved[cpu]: "1 --x" is not a quantity`},
		{"unresolved maxPods expression", func(o *Options) { o.Kubelet.MaxPods = ptr(intstr.FromString("min(max_pods, 30)")) },
			`spec.kubelet.maxPods: expression "min(max_pods, 30)" is not resolved for an instance type`},
		{"unresolved reserved expression", func(o *Options) { o.Kubelet.KubeReserved["cpu"] = "vcpus" },
			`spec.kubelet.kubeReserved[cpu]: "vcpus" is not a quantity (an expression is resolved for an instance type first)`},
		{"other field on Bottlerocket", func(o *Options) {
			o.Family = apiv1.AMIFamilyBottlerocket
			o.Kubelet.Other = map[string]json.RawMessage{"serializeImagePulls": json.RawMessage("false")}
		}, "spec.kubelet: the Bottlerocket family does not apply serializeImagePulls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(apiv1.AMIFamilyAL2023, nil)
			tc.edit(&o)
			_, err := Generate(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ ud, want string }{
		{"[settings", "spec.userData: invalid TOML"},
		{"settings = 1", "spec.userData: settings is a int64, want a table"},
		{"[settings]\nkubernetes = 'x'", "spec.userData: settings.kubernetes is a string, want a table"},
		{"[settings.kubernetes]\nnode-labels = 3", "spec.userData: settings.kubernetes.node-labels is a int64, want a table"},
	} {
		_, err := Generate(testOptions(apiv1.AMIFamilyBottlerocket, ptr(tc.ud)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bottlerocket %q: error %v, want %q", tc.ud, err, tc.want)
		}
	}
	_, err := Generate(testOptions(apiv1.AMIFamilyAL2, ptr("Content-Type: multipart/mixed; boundary=\"b\"\n\nno parts")))
	if err == nil || !strings.HasPrefix(err.Error(), "spec.userData: multipart MIME document has no parts") {
		t.Errorf("al2 bad MIME: %v", err)
	}
}

func TestFamilyOf(t *testing.T) {
	alias := func(a string) []apiv1.AMISelectorTerm { return []apiv1.AMISelectorTerm{{Alias: a}} }
	for _, tc := range []struct {
		spec apiv1.EC2NodeClassSpec
		want string
		err  string
	}{
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: alias("al2023@latest")}, want: "AL2023"},
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: alias("al2@v20240807")}, want: "AL2"},
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: alias("bottlerocket@latest")}, want: "Bottlerocket"},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "Custom", AMISelectorTerms: alias("al2023@latest")}, want: "Custom"},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "AL2023", AMISelectorTerms: alias("al2023@latest")}, want: "AL2023"},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "AL2", AMISelectorTerms: []apiv1.AMISelectorTerm{{ID: "ami-1"}}}, want: "AL2"},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "AL2", AMISelectorTerms: alias("al2023@latest")}, err: `spec.amiFamily: "AL2" does not match the alias family "AL2023"`},
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{ID: "ami-1"}}}, err: "spec.amiFamily: required when spec.amiSelectorTerms has no alias"},
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: alias("windows2022@latest")}, want: "Windows2022"},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "Windows2019", AMISelectorTerms: alias("windows2025@latest")}, err: `does not match the alias family "Windows2025"`},
		{spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: alias("ubuntu@latest")}, err: `spec.amiSelectorTerms[0].alias: family "ubuntu" not supported`},
		{spec: apiv1.EC2NodeClassSpec{AMIFamily: "Ubuntu"}, err: `spec.amiFamily: "Ubuntu" not supported`},
	} {
		got, err := FamilyOf(&tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%+v: got %q, %v; want %q", tc.spec, got, err, tc.want)
		}
	}
}

func TestKubeletRefusesLabel(t *testing.T) {
	for k, want := range map[string]bool{
		"team":                                   false,
		"karpenter.sh/nodepool":                  false,
		"kubernetes.io/hostname":                 false,
		"node.kubernetes.io/instance-type":       false,
		"node.kubernetes.io/anything":            false,
		"foo.node.kubernetes.io/x":               false,
		"kubelet.kubernetes.io/x":                false,
		"topology.kubernetes.io/zone":            false,
		"topology.kubernetes.io/other":           true,
		"kubernetes.io/role":                     true,
		"node-role.kubernetes.io/worker":         true,
		"node-restriction.kubernetes.io/foo":     true,
		"example.k8s.io/x":                       true,
		"k8s.io/x":                               true,
		"notkubernetes.io/x":                     false,
		"failure-domain.beta.kubernetes.io/zone": false,
	} {
		if got := KubeletRefusesLabel(k); got != want {
			t.Errorf("KubeletRefusesLabel(%q) = %v, want %v", k, got, want)
		}
	}
}
