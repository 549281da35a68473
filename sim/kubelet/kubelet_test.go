package kubelet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

const endpoint = "https://127.0.0.1:16443"

func newCA(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func ptr[T any](v T) *T { return &v }

var (
	nodeClaimLabels = map[string]string{
		apiv1.LabelNodePool:              "general-purpose",
		"karpenter.k8s.aws/ec2nodeclass": "default",
		apiv1.LabelCapacityType:          "spot",
		"team":                           "platform",
	}
	nodeClaimTaints = []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute},
	}
	// What every family must carry to the Node (sorted as bootstrap sorts them).
	wantTaints = []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute},
		{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute},
	}
)

func options(family string, caPEM []byte) bootstrap.Options {
	return bootstrap.Options{
		Family: family,
		Cluster: bootstrap.Cluster{
			Name: "local", Endpoint: endpoint, CABundle: base64.StdEncoding.EncodeToString(caPEM),
			ServiceCIDR: "10.96.0.0/12", DNSIP: "10.96.0.10",
		},
		Labels: nodeClaimLabels,
		Taints: nodeClaimTaints,
		Kubelet: &apiv1.KubeletConfiguration{
			MaxPods:        ptr(intstr.FromInt32(17)),
			KubeReserved:   map[string]string{"cpu": "250m", "memory": "700Mi"},
			SystemReserved: map[string]string{"memory": "100Mi"},
			EvictionHard:   map[string]string{"memory.available": "200Mi"},
		},
		MaxPods: 29,
	}
}

func generate(t *testing.T, o bootstrap.Options) string {
	t.Helper()
	ud, err := bootstrap.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return ud
}

// TestRoundTrip: what cloud/bootstrap writes, the node agent reads back.
func TestRoundTrip(t *testing.T) {
	ca := newCA(t, "cluster")
	for _, tc := range []struct {
		family, format string
		userData       *string
	}{
		{apiv1.AMIFamilyAL2023, FormatNodeadm, nil},
		{apiv1.AMIFamilyAL2023, FormatNodeadm, ptr("#!/bin/bash\necho hi\n")},
		{apiv1.AMIFamilyAL2023, FormatNodeadm, ptr("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 99\n    flags: [\"--node-labels=user=yes\"]\n")},
		{apiv1.AMIFamilyAL2, FormatBootstrapSh, nil},
		{apiv1.AMIFamilyAL2, FormatBootstrapSh, ptr("#!/bin/bash\necho hi\n")},
		{apiv1.AMIFamilyBottlerocket, FormatBottlerocket, nil},
		{apiv1.AMIFamilyBottlerocket, FormatBottlerocket, ptr("[settings.kubernetes]\nmax-pods = 99\n[settings.kubernetes.node-labels]\nuser = 'yes'\n")},
	} {
		o := options(tc.family, ca)
		o.UserData = tc.userData
		cfg, err := ParseUserData(generate(t, o))
		if err != nil {
			t.Fatalf("%s %v: %v", tc.family, tc.userData != nil, err)
		}
		want := map[string]string{}
		for k, v := range nodeClaimLabels {
			want[k] = v
		}
		if tc.userData != nil && (tc.family == apiv1.AMIFamilyBottlerocket || tc.format == FormatNodeadm && len(*tc.userData) > 30) {
			want["user"] = "yes" // the user's labels merge with ours
		}
		if cfg.Format != tc.format || cfg.ClusterName != "local" || cfg.Endpoint != endpoint || cfg.CABundle != o.Cluster.CABundle {
			t.Errorf("%s: cluster facts %+v", tc.family, cfg)
		}
		if !reflect.DeepEqual(cfg.Labels, want) {
			t.Errorf("%s: labels %v, want %v", tc.family, cfg.Labels, want)
		}
		if !reflect.DeepEqual(cfg.Taints, wantTaints) {
			t.Errorf("%s: taints %v, want %v", tc.family, cfg.Taints, wantTaints)
		}
		if cfg.MaxPods == nil || *cfg.MaxPods != 17 {
			t.Errorf("%s: maxPods %v, want 17 (ours wins over the user's 99)", tc.family, cfg.MaxPods)
		}
		if !reflect.DeepEqual(cfg.KubeReserved, map[string]string{"cpu": "250m", "memory": "700Mi"}) ||
			!reflect.DeepEqual(cfg.SystemReserved, map[string]string{"memory": "100Mi"}) ||
			!reflect.DeepEqual(cfg.EvictionHard, map[string]string{"memory.available": "200Mi"}) {
			t.Errorf("%s: reserved %v %v %v", tc.family, cfg.KubeReserved, cfg.SystemReserved, cfg.EvictionHard)
		}
		if !reflect.DeepEqual(cfg.ClusterDNS, []string{"10.96.0.10"}) {
			t.Errorf("%s: clusterDNS %v", tc.family, cfg.ClusterDNS)
		}
	}
}

// testHardware is how EC2 describes the types these tests boot.
var testHardware = map[string]Hardware{
	"m5.large":    {Name: "m5.large", Arch: "amd64", VCPU: 2, MemoryMiB: 8192, Hypervisor: "nitro", DefaultCardENIs: 3, IPv4PerENI: 10, MaxEBSAttachments: 27, EBSAttachmentType: "shared"},
	"m5d.large":   {Name: "m5d.large", Arch: "amd64", VCPU: 2, MemoryMiB: 8192, Hypervisor: "nitro", DefaultCardENIs: 3, IPv4PerENI: 10, LocalNVMeGB: 75, MaxEBSAttachments: 26, EBSAttachmentType: "shared"},
	"c7i.large":   {Name: "c7i.large", Arch: "amd64", VCPU: 2, MemoryMiB: 4096, Hypervisor: "nitro", DefaultCardENIs: 3, IPv4PerENI: 10, MaxEBSAttachments: 32, EBSAttachmentType: "dedicated"},
	"g4dn.xlarge": {Name: "g4dn.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384, Hypervisor: "nitro", DefaultCardENIs: 3, IPv4PerENI: 10, NvidiaGPUs: 1, LocalNVMeGB: 125, MaxEBSAttachments: 25, EBSAttachmentType: "shared"},
	"inf2.xlarge": {Name: "inf2.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384, Hypervisor: "nitro", DefaultCardENIs: 4, IPv4PerENI: 15, Neuron: 1, MaxEBSAttachments: 26, EBSAttachmentType: "shared"},
}

func registrar(t *testing.T, ca []byte) (*Registrar, *fake.Clientset) {
	kc := fake.NewClientset()
	fakeKwok(kc)
	return &Registrar{
		Kube: kc, Hardware: func(name string) (Hardware, bool) { h, ok := testHardware[name]; return h, ok }, Region: "us-east-1", Log: zap.NewNop(),
		ClusterEndpoint: endpoint, ClusterCA: ca,
	}, kc
}

func instance(typ, userData string) Instance {
	return Instance{
		ID: "i-0123456789abcdef0", InstanceType: typ, Zone: "us-east-1b",
		PrivateDNSName: "ip-10-0-64-4.ec2.internal", UserData: userData, ImageID: "ami-0abc",
	}
}

func nodes(t *testing.T, kc *fake.Clientset) []corev1.Node {
	l, err := kc.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestRegisterFromUserData(t *testing.T) {
	ca := newCA(t, "cluster")
	for _, family := range []string{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket} {
		r, kc := registrar(t, ca)
		if err := r.Register(context.Background(), instance("m5.large", generate(t, options(family, ca)))); err != nil {
			t.Fatalf("%s: %v", family, err)
		}
		ns := nodes(t, kc)
		if len(ns) != 1 {
			t.Fatalf("%s: %d nodes", family, len(ns))
		}
		n := ns[0]
		want := map[string]string{
			// user data
			apiv1.LabelNodePool: "general-purpose", "karpenter.k8s.aws/ec2nodeclass": "default", apiv1.LabelCapacityType: "spot", "team": "platform",
			// the kubelet
			apiv1.LabelHostname: "ip-10-0-64-4.ec2.internal", apiv1.LabelOS: "linux", apiv1.LabelArch: "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
			// the cloud node manager
			apiv1.LabelInstanceType: "m5.large", "beta.kubernetes.io/instance-type": "m5.large",
			apiv1.LabelZone: "us-east-1b", "failure-domain.beta.kubernetes.io/zone": "us-east-1b",
			apiv1.LabelRegion: "us-east-1", "failure-domain.beta.kubernetes.io/region": "us-east-1",
			// the kubelet, from the EBS CSI driver's topology
			"topology.ebs.csi.aws.com/zone": "us-east-1b",
		}
		if !reflect.DeepEqual(n.Labels, want) {
			t.Errorf("%s: labels\n got %v\nwant %v", family, n.Labels, want)
		}
		if !reflect.DeepEqual(n.Spec.Taints, wantTaints) {
			t.Errorf("%s: taints %v, want %v", family, n.Spec.Taints, wantTaints)
		}
		if n.Spec.ProviderID != "aws:///us-east-1b/i-0123456789abcdef0" {
			t.Errorf("%s: providerID %s", family, n.Spec.ProviderID)
		}
		// maxPods 17 from spec.kubelet reaches allocatable; kube-reserved
		// 250m/700Mi, system-reserved 100Mi and eviction 200Mi come off.
		// m5.large: 2 vCPU; the kernel sees 8192 MiB less 128 (struct
		// pages), 96 (kernel) and 122 (Nitro, 1.5%): 7846 MiB.
		// Ephemeral storage: the filesystem on the 20Gi volume (xfs keeps
		// 0.4%, Bottlerocket's ext4 1.6%) less 1Gi kube-reserved and 10%.
		eph := int64(21388937135 - 1073741824 - 2138893714)
		if family == apiv1.AMIFamilyBottlerocket {
			eph = 21131239097 - 1073741824 - 2113123910
		}
		wantAlloc := corev1.ResourceList{
			corev1.ResourcePods:             resource.MustParse("17"),
			corev1.ResourceCPU:              resource.MustParse("1750m"),
			corev1.ResourceMemory:           resource.MustParse("6846Mi"),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(eph, resource.BinarySI),
		}
		for name, q := range wantAlloc {
			if got := n.Status.Allocatable[name]; got.Cmp(q) != 0 {
				t.Errorf("%s: allocatable %s = %s, want %s", family, name, got.String(), q.String())
			}
		}
		if c := n.Status.Capacity[corev1.ResourcePods]; c.Value() != 17 {
			t.Errorf("%s: capacity pods %s, want 17", family, c.String())
		}
	}
}

func TestMaxPodsFromCallerReachesAllocatable(t *testing.T) {
	ca := newCA(t, "cluster")
	for _, family := range []string{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket} {
		o := options(family, ca)
		o.Kubelet = nil
		o.MaxPods = 8
		r, kc := registrar(t, ca)
		if err := r.Register(context.Background(), instance("m5.large", generate(t, o))); err != nil {
			t.Fatalf("%s: %v", family, err)
		}
		n := nodes(t, kc)[0]
		if p := n.Status.Allocatable[corev1.ResourcePods]; p.Value() != 8 {
			t.Errorf("%s: allocatable pods %s, want 8", family, p.String())
		}
		// nodeadm and bootstrap.sh reserve memory for the ENI limit (29
		// pods: 11*29+255 = 574 MiB) whatever maxPods says; Bottlerocket
		// for its max-pods (8: 343 MiB). Eviction 100 MiB.
		want := int64(7846 - 574 - 100)
		if family == apiv1.AMIFamilyBottlerocket {
			want = 7846 - 343 - 100
		}
		if m := n.Status.Allocatable[corev1.ResourceMemory]; m.Value() != want<<20 {
			t.Errorf("%s: allocatable memory %d MiB, want %d", family, m.Value()>>20, want)
		}
	}
}

func TestNoNodeWhenUserDataDoesNotJoin(t *testing.T) {
	ca := newCA(t, "cluster")
	other := newCA(t, "someone else")
	al2023 := func(edit func(*bootstrap.Options)) string {
		o := options(apiv1.AMIFamilyAL2023, ca)
		edit(&o)
		return generate(t, o)
	}
	for _, tc := range []struct {
		name string
		inst Instance
	}{
		{"wrong CA", instance("m5.large", al2023(func(o *bootstrap.Options) { o.Cluster.CABundle = base64.StdEncoding.EncodeToString(other) }))},
		{"CA not PEM", instance("m5.large", al2023(func(o *bootstrap.Options) { o.Cluster.CABundle = base64.StdEncoding.EncodeToString([]byte("garbage")) }))},
		{"wrong endpoint", instance("m5.large", al2023(func(o *bootstrap.Options) { o.Cluster.Endpoint = "https://127.0.0.1:6443" }))},
		{"wrong endpoint host", instance("m5.large", al2023(func(o *bootstrap.Options) { o.Cluster.Endpoint = "https://ABC.gr7.us-east-1.eks.amazonaws.com" }))},
		{"wrong CA on AL2", instance("m5.large", func() string {
			o := options(apiv1.AMIFamilyAL2, other)
			return generate(t, o)
		}())},
		{"wrong endpoint on Bottlerocket", instance("m5.large", func() string {
			o := options(apiv1.AMIFamilyBottlerocket, ca)
			o.Cluster.Endpoint = "https://other:443"
			return generate(t, o)
		}())},
		{"no user data", instance("m5.large", "")},
		{"not base64", instance("m5.large", "#!/bin/bash")},
		{"a script that does not bootstrap", instance("m5.large", base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\necho hi\n")))},
		{"custom user data with a label the kubelet refuses", instance("m5.large", func() string {
			o := options(apiv1.AMIFamilyCustom, ca)
			s := "#!/bin/bash\n/etc/eks/bootstrap.sh 'local' --apiserver-endpoint '" + endpoint + "' --b64-cluster-ca '" + base64.StdEncoding.EncodeToString(ca) + "' --kubelet-extra-args '--node-labels=node-role.kubernetes.io/worker=true'\n"
			o.UserData = &s
			return generate(t, o)
		}())},
	} {
		r, kc := registrar(t, ca)
		err := r.Register(context.Background(), tc.inst)
		if !errors.Is(err, ErrNotJoined) {
			t.Errorf("%s: error %v, want ErrNotJoined", tc.name, err)
		}
		if ns := nodes(t, kc); len(ns) != 0 {
			t.Errorf("%s: %d nodes created", tc.name, len(ns))
		}
		t.Logf("%s: %v", tc.name, err)
	}
}

func TestCustomUserDataJoinsWhenCorrect(t *testing.T) {
	ca := newCA(t, "cluster")
	s := "#!/bin/bash\nset -e\n/etc/eks/bootstrap.sh local --apiserver-endpoint " + endpoint + " --b64-cluster-ca " + base64.StdEncoding.EncodeToString(ca) +
		" --use-max-pods false --kubelet-extra-args \"--node-labels=a=b --register-with-taints=x=y:NoSchedule\"\n"
	r, kc := registrar(t, ca)
	o := options(apiv1.AMIFamilyCustom, ca)
	o.UserData = &s
	if err := r.Register(context.Background(), instance("m5.large", generate(t, o))); err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	if n.Labels["a"] != "b" || !reflect.DeepEqual(n.Spec.Taints, []corev1.Taint{{Key: "x", Value: "y", Effect: corev1.TaintEffectNoSchedule}}) {
		t.Errorf("labels %v taints %v", n.Labels, n.Spec.Taints)
	}
	// --use-max-pods false without --max-pods: the kubelet default, 110.
	if p := n.Status.Allocatable[corev1.ResourcePods]; p.Value() != 110 {
		t.Errorf("pods %s, want 110", p.String())
	}
}

func TestAcceleratorsOnlyWithTheirImageVariant(t *testing.T) {
	ca := newCA(t, "cluster")
	gpu := corev1.ResourceName("nvidia.com/gpu")
	for _, tc := range []struct {
		variant string
		image   bool
		want    int64
	}{{"standard", true, 0}, {"nvidia", true, 1}, {"neuron", true, 0}, {"", false, 0}} {
		r, kc := registrar(t, ca)
		if tc.image {
			r.Image = func(id string) (Image, bool) { return Image{Arch: "x86_64", Variant: tc.variant}, id == "ami-0abc" }
		}
		if err := r.Register(context.Background(), instance("g4dn.xlarge", generate(t, options(apiv1.AMIFamilyAL2023, ca)))); err != nil {
			t.Fatal(err)
		}
		n := nodes(t, kc)[0]
		c, a := n.Status.Capacity[gpu], n.Status.Allocatable[gpu]
		if c.Value() != tc.want || a.Value() != tc.want {
			t.Errorf("variant %q: nvidia.com/gpu capacity %s allocatable %s, want %d", tc.variant, c.String(), a.String(), tc.want)
		}
	}
	r, kc := registrar(t, ca)
	r.Image = func(string) (Image, bool) { return Image{Arch: "x86_64", Variant: "neuron"}, true }
	if err := r.Register(context.Background(), instance("inf2.xlarge", generate(t, options(apiv1.AMIFamilyAL2023, ca)))); err != nil {
		t.Fatal(err)
	}
	if q := nodes(t, kc)[0].Status.Allocatable["aws.amazon.com/neuron"]; q.Value() != 1 {
		t.Errorf("inf2.xlarge on the neuron image: aws.amazon.com/neuron %s, want 1", q.String())
	}
}

func TestImageOfOtherArchDoesNotBoot(t *testing.T) {
	ca := newCA(t, "cluster")
	r, kc := registrar(t, ca)
	r.Image = func(string) (Image, bool) { return Image{Arch: "arm64", Variant: "standard"}, true }
	err := r.Register(context.Background(), instance("m5.large", generate(t, options(apiv1.AMIFamilyAL2023, ca))))
	if !errors.Is(err, ErrNotJoined) || len(nodes(t, kc)) != 0 {
		t.Fatalf("arm64 image on m5.large: %v, %d nodes", err, len(nodes(t, kc)))
	}
	t.Log(err)
}

// The node's CSINode carries the EBS CSI driver with the volume limit its
// node plugin computes from instance metadata (aws-ebs-csi-driver
// getVolumesLimit): m5.large has 27 attachments shared with ENIs; the
// root volume takes one (26), a second EBS volume another (25), two more
// ENIs two more (24). c7i.large's 32 are dedicated: ENIs do not count.
func TestCSINodeCarriesTheEBSLimit(t *testing.T) {
	ca := newCA(t, "cluster")
	ud := generate(t, options(apiv1.AMIFamilyAL2023, ca))
	root := BlockDevice{DeviceName: "/dev/xvda", VolumeSize: 20}
	data := BlockDevice{DeviceName: "/dev/xvdb", VolumeSize: 50}
	for _, c := range []struct {
		typ  string
		devs []BlockDevice
		enis int
		want int32
	}{
		{"m5.large", []BlockDevice{root}, 1, 26},
		{"m5.large", []BlockDevice{root, data}, 1, 25},
		{"m5.large", []BlockDevice{root}, 3, 24},
		{"c7i.large", []BlockDevice{root}, 3, 31},
	} {
		r, kc := registrar(t, ca)
		inst := instance(c.typ, ud)
		inst.BlockDevices, inst.NetworkInterfaces = c.devs, c.enis
		if err := r.Register(context.Background(), inst); err != nil {
			t.Fatal(err)
		}
		cn, err := kc.StorageV1().CSINodes().Get(context.Background(), inst.PrivateDNSName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cn.Spec.Drivers) != 1 || cn.Spec.Drivers[0].Name != "ebs.csi.aws.com" || cn.Spec.Drivers[0].NodeID != inst.ID ||
			cn.Spec.Drivers[0].Allocatable == nil || *cn.Spec.Drivers[0].Allocatable.Count != c.want {
			t.Errorf("%s, %d block devices, %d ENIs: CSINode drivers %+v, want ebs.csi.aws.com count %d", c.typ, len(c.devs), c.enis, cn.Spec.Drivers, c.want)
		}
		if len(cn.OwnerReferences) != 1 || cn.OwnerReferences[0].Kind != "Node" || cn.OwnerReferences[0].Name != inst.PrivateDNSName {
			t.Errorf("CSINode owner %+v, want the Node", cn.OwnerReferences)
		}
	}
}

// instanceStorePolicy RAID0 reaches the node through user data alone: the
// agent finds nodeadm's localStorage strategy, bootstrap.sh's --local-disks
// raid0 or Bottlerocket's ephemeral-storage commands, and the kubelet's
// ephemeral storage is the xfs array on the instance store's 75 GB on
// m5d.large (decimal, as EC2 gives it; xfs keeps 0.4%); without the
// policy, or on m5.large (no instance store), the filesystem on the 20Gi
// data volume.
func TestRAID0EphemeralStorageFromUserData(t *testing.T) {
	ca := newCA(t, "cluster")
	root := []BlockDevice{{DeviceName: "/dev/xvda", VolumeSize: 20}}
	for _, family := range []string{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket} {
		for _, c := range []struct {
			typ   string
			raid0 bool
			want  int64 // ephemeral-storage capacity, bytes
		}{
			{"m5d.large", true, 74_700_000_000},
			{"m5d.large", false, 21388937135},
			{"m5.large", true, 21388937135},
		} {
			o := options(family, ca)
			o.RAID0 = c.raid0
			ud := generate(t, o)
			cfg, err := ParseUserData(ud)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.RAID0 != c.raid0 {
				t.Errorf("%s: user data says RAID0 %t, want %t", family, cfg.RAID0, c.raid0)
			}
			r, kc := registrar(t, ca)
			inst := instance(c.typ, ud)
			inst.BlockDevices = root
			if family == apiv1.AMIFamilyBottlerocket {
				inst.BlockDevices = []BlockDevice{{DeviceName: "/dev/xvda", VolumeSize: 4}, {DeviceName: "/dev/xvdb", VolumeSize: 20}}
			}
			if err := r.Register(context.Background(), inst); err != nil {
				t.Fatal(err)
			}
			got := nodes(t, kc)[0].Status.Capacity[corev1.ResourceEphemeralStorage]
			if family == apiv1.AMIFamilyBottlerocket && !(c.raid0 && c.typ == "m5d.large") {
				c.want = 21131239097 // Bottlerocket's ext4 data volume
			}
			if got.Value() != c.want {
				t.Errorf("%s %s RAID0=%t: ephemeral-storage capacity %d, want %d", family, c.typ, c.raid0, got.Value(), c.want)
			}
		}
	}
}

// The EBS CSI driver's node plugin removes its startup taint once the
// node's CSINode carries its limit.
func TestEBSDriverRemovesItsStartupTaint(t *testing.T) {
	ca := newCA(t, "cluster")
	o := options(apiv1.AMIFamilyAL2023, ca)
	o.Taints = append(o.Taints, corev1.Taint{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute})
	r, kc := registrar(t, ca)
	if err := r.Register(context.Background(), instance("m5.large", generate(t, o))); err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	for _, tt := range n.Spec.Taints {
		if tt.Key == "ebs.csi.aws.com/agent-not-ready" {
			t.Errorf("taint %v still on the node", tt)
		}
	}
	if !reflect.DeepEqual(n.Spec.Taints, wantTaints) {
		t.Errorf("taints %v, want %v", n.Spec.Taints, wantTaints)
	}
}

// The driver's taint watcher removes its taint again when a controller
// puts it back after registration (Karpenter's startup taint sync).
func TestEBSTaintWatcherRemovesTheTaintAgain(t *testing.T) {
	ca := newCA(t, "cluster")
	o := options(apiv1.AMIFamilyAL2023, ca)
	o.Taints = append(o.Taints, corev1.Taint{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute})
	r, kc := registrar(t, ca)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.Register(ctx, instance("m5.large", generate(t, o))); err != nil {
		t.Fatal(err)
	}
	n := nodes(t, kc)[0]
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute})
	if _, err := kc.CoreV1().Nodes().Update(ctx, &n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		cur, err := kc.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !hasTaintKey(cur, "ebs.csi.aws.com/agent-not-ready") {
			break
		}
		if i == 500 {
			t.Fatal("the taint put back was never removed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The local kubelet sizes Nodes from its own formulas: it must not import
// the catalog, solver or resources packages Joinery plans with.
func TestSizesImportNothingOfJoinerysModel(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"/joinery/catalog", "/joinery/solver", "/joinery/policy", "/joinery/activities"} {
			if strings.Contains(p, banned) {
				t.Errorf("sim/kubelet imports %s", p)
			}
		}
	}
}

// nodeadm's kube-reserved cpu, step by step in whole millicores
// (awslabs/amazon-eks-ami nodeadm): 60/70/80/90/110/150/190/230/310m.
func TestReservedCPU(t *testing.T) {
	for vcpu, want := range map[int64]int64{1: 60, 2: 70, 4: 80, 8: 90, 16: 110, 32: 150, 48: 190, 64: 230, 96: 310} {
		if got := reservedCPU(vcpu * 1000); got != want {
			t.Errorf("%d vCPU: %dm, want %dm", vcpu, got, want)
		}
	}
}

// The guest's memory: 1/64 for struct pages, 96 MiB of kernel, the
// hypervisor's share (none on metal), 64 MiB CMA on arm64; or what a
// measured type reports.
func TestMemTotal(t *testing.T) {
	for _, c := range []struct {
		h    Hardware
		want int64
	}{
		{Hardware{MemoryMiB: 8192, Hypervisor: "nitro", Arch: "amd64"}, 8192 - 128 - 96 - 122},
		{Hardware{MemoryMiB: 8192, Hypervisor: "nitro", Arch: "arm64"}, 8192 - 128 - 96 - 122 - 64},
		{Hardware{MemoryMiB: 8192, Hypervisor: "xen", Arch: "amd64"}, 8192 - 128 - 96 - 204},
		{Hardware{MemoryMiB: 393216, BareMetal: true, Arch: "amd64"}, 393216 - 6144 - 96},
		{Hardware{MemoryMiB: 8192, MemTotalMiB: 7000}, 7000},
	} {
		if got := c.h.memTotalMiB(); got != c.want {
			t.Errorf("%+v: %d MiB, want %d", c.h, got, c.want)
		}
	}
}
