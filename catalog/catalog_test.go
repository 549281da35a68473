package catalog

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDefaultCatalogHasKnownTypes(t *testing.T) {
	c := MustDefault()
	m5, ok := c.Get("m5.large")
	if !ok {
		t.Fatal("m5.large missing")
	}
	if m5.VCPU != 2 || m5.MemoryMiB != 8192 || m5.MaxPods != 29 || m5.OnDemandPrice != 0.096 {
		t.Fatalf("m5.large = %+v", m5)
	}
	if m5.SpotSavingsPct != 66 {
		t.Fatalf("m5.large spot savings = %d, want 66", m5.SpotSavingsPct)
	}
	if got := m5.SpotPrice(); got < 0.0326 || got > 0.0327 {
		t.Fatalf("spot price = %v", got)
	}
	if _, ok := c.Get("mac1.metal"); ok {
		t.Fatal("mac types must be filtered out")
	}
	if len(c.Types) < 1300 {
		t.Fatalf("only %d types", len(c.Types))
	}
	p3, _ := c.Get("p3.8xlarge")
	if p3 == nil || p3.GPUCount != 4 || p3.GPUManufacturer != "nvidia" {
		t.Fatalf("p3.8xlarge = %+v", p3)
	}
}

func TestShapeMatchesEKSFormulas(t *testing.T) {
	m5, _ := MustDefault().Get("m5.large")
	s := m5.Shape(nil, 20<<30)
	// cpu: 2000m − (60m + 10m) = 1930m
	if got := s.Allocatable[resources.CPU]; got != 1930 {
		t.Errorf("allocatable cpu = %dm, want 1930m", got)
	}
	// memory: 8192 − ceil(8192×0.075)=615 → 7577 MiB capacity; − (11×29+255)=574 − 100 = 6903 MiB
	if got := s.Capacity[resources.Memory] >> 20; got != 7577 {
		t.Errorf("capacity memory = %d MiB, want 7577", got)
	}
	if got := s.Allocatable[resources.Memory] >> 20; got != 6903 {
		t.Errorf("allocatable memory = %d MiB, want 6903", got)
	}
	if got := s.Allocatable[resources.Pods]; got != 29 {
		t.Errorf("pods = %d", got)
	}
	// 96 vCPU: 60 + 10 + 10 + 0.25% × 92000 = 310m
	if got := kubeReservedCPU(96000); got != 310 {
		t.Errorf("kube-reserved cpu for 96 vCPU = %d, want 310", got)
	}
}

// With maxPods set, nodeadm and bootstrap.sh still reserve memory for the
// ENI max pods (29 on m5.large: 574 MiB); Bottlerocket for its max-pods (8:
// 343 MiB). Karpenter's UsesENILimitedMemoryOverhead.
func TestKubeReservedMemoryWithMaxPods(t *testing.T) {
	m5, _ := MustDefault().Get("m5.large")
	eight := int32(8)
	for _, c := range []struct {
		spec apiv1.EC2NodeClassSpec
		want int64 // allocatable MiB
	}{
		{apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}}, 7577 - 574 - 100},
		{apiv1.EC2NodeClassSpec{AMIFamily: apiv1.AMIFamilyAL2, AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2@latest"}}}, 7577 - 574 - 100},
		{apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}}, 7577 - 343 - 100},
		{apiv1.EC2NodeClassSpec{AMIFamily: apiv1.AMIFamilyCustom, AMISelectorTerms: []apiv1.AMISelectorTerm{{ID: "ami-0abc"}}}, 7577 - 343 - 100},
	} {
		c.spec.Kubelet = &apiv1.KubeletConfiguration{MaxPods: ptr(intstr.FromInt32(eight))}
		s := m5.ShapeOf(LaunchOf(&c.spec))
		if got := s.Allocatable[resources.Memory] >> 20; got != c.want || s.Allocatable[resources.Pods] != 8 {
			t.Errorf("%s %v: allocatable memory %d MiB, pods %d; want %d MiB, 8", c.spec.AMIFamily, c.spec.AMISelectorTerms, got, s.Allocatable[resources.Pods], c.want)
		}
	}
}

// The EBS volume limit is what the EBS CSI driver's node plugin reports in
// CSINode (aws-ebs-csi-driver pkg/driver/node.go getVolumesLimit): the
// type's EC2 attachment limit (27 for a Nitro type the driver's table
// leaves out, 26 for m5d.large whose NVMe disk takes a slot, 32 dedicated
// for c7i.large, 39 for the Xen m4.large) less the root volume and the
// other EBS volumes, less the ENIs beyond the first when they share it.
func TestEBSVolumeLimit(t *testing.T) {
	cat := MustDefault()
	cases := []struct {
		typ        string
		extra, eni int
		want       int64
	}{
		{"m5.large", 0, 1, 26},
		{"m5.large", 1, 1, 25}, // Bottlerocket's data volume
		{"m5.large", 0, 3, 24}, // two more ENIs share the 28 slots
		{"m5d.large", 0, 1, 25},
		{"c7i.large", 0, 3, 31}, // dedicated: ENIs do not count
		{"m4.large", 0, 2, 38},
		{"m5.large", 30, 1, 1}, // never below 1
	}
	for _, c := range cases {
		it, ok := cat.Get(c.typ)
		if !ok {
			t.Fatalf("%s not in catalog", c.typ)
		}
		if got := it.EBSVolumeLimit(c.extra, c.eni); got != c.want {
			t.Errorf("%s with %d extra volumes and %d ENIs: %d, want %d", c.typ, c.extra, c.eni, got, c.want)
		}
	}
	m5, _ := cat.Get("m5.xlarge")
	if sh := m5.Shape(nil, 20<<30); sh.Allocatable[resources.EBSVolumes] != 26 || sh.Capacity[resources.EBSVolumes] != 26 {
		t.Errorf("m5.xlarge shape EBS volumes %d/%d, want 26", sh.Capacity[resources.EBSVolumes], sh.Allocatable[resources.EBSVolumes])
	}
	br := &apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}}
	if sh := m5.ShapeOf(LaunchOf(br)); sh.Allocatable[resources.EBSVolumes] != 25 {
		t.Errorf("m5.xlarge on Bottlerocket (data volume /dev/xvdb): %d EBS volumes, want 25", sh.Allocatable[resources.EBSVolumes])
	}
	if (&InstanceType{Name: "x"}).EBSVolumeLimit(0, 1) != 26 {
		t.Errorf("a type the driver does not list gets its default 27 shared")
	}
}

// instanceStorePolicy RAID0: ephemeral storage is the instance store's
// total size where the type has one (Karpenter's ephemeralStorage):
// m5d.large 75 GB (decimal), allocatable less 1Gi kube-reserved and 10%
// nodefs eviction; m5.large has none and keeps its root volume.
func TestRAID0EphemeralStorage(t *testing.T) {
	cat := MustDefault()
	raid0 := apiv1.InstanceStorePolicyRAID0
	spec := &apiv1.EC2NodeClassSpec{InstanceStorePolicy: &raid0}
	m5d, _ := cat.Get("m5d.large")
	sh := m5d.ShapeOf(LaunchOf(spec))
	if sh.Capacity[resources.EphemeralStorage] != 75_000_000_000 {
		t.Errorf("m5d.large RAID0 ephemeral capacity %d, want 75000000000", sh.Capacity[resources.EphemeralStorage])
	}
	if want := int64(75_000_000_000 - 1<<30 - 7_500_000_000); sh.Allocatable[resources.EphemeralStorage] != want {
		t.Errorf("m5d.large RAID0 ephemeral allocatable %d, want %d", sh.Allocatable[resources.EphemeralStorage], want)
	}
	if sh := m5d.ShapeOf(LaunchOf(&apiv1.EC2NodeClassSpec{})); sh.Capacity[resources.EphemeralStorage] != 20<<30 {
		t.Errorf("m5d.large without RAID0: %d, want the 20Gi root volume", sh.Capacity[resources.EphemeralStorage])
	}
	m5, _ := cat.Get("m5.large")
	if sh := m5.ShapeOf(LaunchOf(spec)); sh.Capacity[resources.EphemeralStorage] != 20<<30 {
		t.Errorf("m5.large RAID0 (no instance store): %d, want the 20Gi root volume", sh.Capacity[resources.EphemeralStorage])
	}
}
