package nodeclass

import (
	"errors"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAliasParametersFollowEKSPaths(t *testing.T) {
	a, err := ParseAlias("al2023@latest")
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := a.Parameters("1.37")
	if len(ps) != 5 || ps[0].Path != "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id" {
		t.Fatalf("al2023@latest: %+v", ps)
	}
	a, _ = ParseAlias("al2023@v20240807")
	ps, _ = a.Parameters("1.30")
	if want := "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.30-v20240807/image_id"; ps[4].Path != want {
		t.Fatalf("pinned arm64 nvidia: got %s want %s", ps[4].Path, want)
	}
	a, _ = ParseAlias("bottlerocket@v1.20.0")
	ps, _ = a.Parameters("1.37")
	if ps[0].Path != "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.20.0/image_id" || len(ps[0].Variants) != 2 {
		t.Fatalf("bottlerocket: %+v", ps[0])
	}
	a, _ = ParseAlias("al2@latest")
	if _, err := a.Parameters("1.37"); !errors.As(err, new(ErrUnsupportedAlias)) {
		t.Fatalf("al2 on 1.37: want UnsupportedAlias, got %v", err)
	}
	if ps, err := a.Parameters("1.32"); err != nil || !strings.Contains(ps[2].Path, "amazon-linux-2-gpu/recommended") {
		t.Fatalf("al2 on 1.32: %v %+v", err, ps)
	}
	for _, bad := range []string{"al2023", "ubuntu@latest", "al2023@"} {
		if _, err := ParseAlias(bad); err == nil {
			t.Errorf("ParseAlias(%q): want error", bad)
		}
	}
}

func TestSelectAMIsNewestPerRequirementSetAndTypesGetTheirVariant(t *testing.T) {
	img := func(id, arch, date string, dep bool) Image {
		return Image{ID: id, Name: "n-" + id, Architecture: arch, CreationDate: date, Deprecated: dep}
	}
	amis := SelectAMIs([]Candidate{
		{img("ami-old", "x86_64", "2026-10-01T00:00:00Z", false), []string{VariantStandard}},
		{img("ami-new", "x86_64", "2026-11-01T00:00:00Z", false), []string{VariantStandard}},
		{img("ami-newer-deprecated", "x86_64", "2026-11-15T00:00:00Z", true), []string{VariantStandard}},
		{img("ami-gpu", "x86_64", "2026-11-01T00:00:00Z", false), []string{VariantNvidia}},
		{img("ami-arm", "arm64", "2026-11-02T00:00:00Z", false), []string{VariantStandard}},
		{img("ami-i386", "i386", "2026-11-03T00:00:00Z", false), []string{VariantStandard}},
	})
	var ids []string
	for _, a := range amis {
		ids = append(ids, a.ID)
	}
	if got := strings.Join(ids, ","); got != "ami-arm,ami-gpu,ami-new" {
		t.Fatalf("selected %s", got)
	}
	cat := catalog.MustDefault()
	for typ, want := range map[string]string{"m6i.large": "ami-new", "m7g.large": "ami-arm", "g4dn.xlarge": "ami-gpu"} {
		it, _ := cat.Get(typ)
		got, ok := AMIFor(amis, it.Labels())
		if !ok || got.ID != want {
			t.Errorf("%s: got %q (%v), want %s", typ, got.ID, ok, want)
		}
	}
	// arm64 GPU types have no image here.
	it, _ := cat.Get("g5g.xlarge")
	if got, ok := AMIFor(amis, it.Labels()); ok {
		t.Errorf("g5g.xlarge: got %s, want none", got.ID)
	}
}

func TestStatusConditionsNameTheFailingPart(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	good := Resolution{
		Subnets:         []apiv1.SubnetStatus{{ID: "subnet-1", Zone: "us-east-1a"}},
		SecurityGroups:  []apiv1.SecurityGroupStatus{{ID: "sg-1"}},
		AMIs:            []apiv1.AMIStatus{{ID: "ami-1"}},
		InstanceProfile: "p",
	}
	st := Status(nil, good, 3, now)
	cls := &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 3}, Status: st}
	if why := NotReady(cls); why != "" {
		t.Fatalf("ready class: %s", why)
	}
	cls.Generation = 4
	if why := NotReady(cls); !strings.Contains(why, "generation 4") {
		t.Fatalf("stale status: %q", why)
	}
	bad := good
	bad.SecurityGroups = nil
	later := metav1.NewTime(now.Add(time.Minute))
	st2 := Status(st.Conditions, bad, 4, later)
	cls.Status = st2
	why := NotReady(cls)
	if !strings.Contains(why, "SecurityGroupsReady=False") || !strings.Contains(why, "securityGroupSelectorTerms") {
		t.Fatalf("NotReady: %q", why)
	}
	sg := apiv1.FindCondition(st2.Conditions, apiv1.ConditionSecurityGroupsReady)
	sub := apiv1.FindCondition(st2.Conditions, apiv1.ConditionSubnetsReady)
	if sg.Reason != "SecurityGroupsNotFound" || !sg.LastTransitionTime.Equal(&later) || !sub.LastTransitionTime.Equal(&now) {
		t.Fatalf("conditions: %+v / %+v", sg, sub)
	}
	bad.AMIsErr = ErrUnsupportedAlias{Reason: "no al2"}
	if c := apiv1.FindCondition(Status(nil, bad, 1, now).Conditions, apiv1.ConditionAMIsReady); c.Reason != "UnsupportedAlias" {
		t.Fatalf("AMIsReady: %+v", c)
	}
}

func TestDriftReason(t *testing.T) {
	now := metav1.Now()
	cls := &apiv1.EC2NodeClass{Status: Status(nil, Resolution{
		Subnets:         []apiv1.SubnetStatus{{ID: "subnet-1"}, {ID: "subnet-2"}},
		SecurityGroups:  []apiv1.SecurityGroupStatus{{ID: "sg-2"}, {ID: "sg-1"}},
		AMIs:            []apiv1.AMIStatus{{ID: "ami-1"}},
		InstanceProfile: "p",
	}, 0, now)}
	cases := map[string]Launched{
		"":                       {ImageID: "ami-1", SubnetID: "subnet-2", SecurityGroupIDs: []string{"sg-1", "sg-2"}},
		ReasonAMIDrift:           {ImageID: "ami-0", SubnetID: "subnet-2"},
		ReasonSubnetDrift:        {ImageID: "ami-1", SubnetID: "subnet-9"},
		ReasonSecurityGroupDrift: {ImageID: "ami-1", SecurityGroupIDs: []string{"sg-1"}},
	}
	for want, l := range cases {
		if got := DriftReason(l, cls); got != want {
			t.Errorf("%+v: got %q want %q", l, got, want)
		}
	}
	cls.Status.Conditions = nil
	if got := DriftReason(Launched{ImageID: "ami-0"}, cls); got != "" {
		t.Errorf("unresolved class drifted a node: %s", got)
	}
}

func TestNamesAreStableAndChangeWithContent(t *testing.T) {
	a, _ := LaunchTemplateName("prod", map[string]string{"image": "ami-1"})
	b, _ := LaunchTemplateName("prod", map[string]string{"image": "ami-1"})
	c, _ := LaunchTemplateName("prod", map[string]string{"image": "ami-2"})
	if a != b || a == c || !strings.HasPrefix(a, "joinery/prod/") {
		t.Fatalf("template names %s %s %s", a, b, c)
	}
	if InstanceProfileName("prod", "us-east-1", "uid", "r1") == InstanceProfileName("prod", "us-east-1", "uid", "r2") {
		t.Fatal("a new role must give a new profile name")
	}
}

// Every Karpenter v1.14 field Joinery does not honour is named when set
// (nothing silently ignored), and a class setting one is not ready;
// instanceStorePolicy RAID0 and the launch fields Joinery passes on are
// honoured, so not listed.
func TestUnsupportedFieldsAreNamed(t *testing.T) {
	raid0, other, name := apiv1.InstanceStorePolicyRAID0, "RAID10", "pg"
	yes, n := true, int32(2)
	spec := apiv1.EC2NodeClassSpec{
		InstanceStorePolicy:              &raid0,
		CapacityReservationSelectorTerms: []apiv1.CapacityReservationSelectorTerm{{ID: "cr-0123"}},
		PlacementGroupSelector:           &apiv1.PlacementGroupSelector{Name: &name},
		AssociatePublicIPAddress:         &yes,
		IPPrefixCount:                    &n,
		NetworkInterfaces:                []apiv1.NetworkInterface{{DeviceIndex: 1, InterfaceType: apiv1.InterfaceTypeEFAOnly}},
		DetailedMonitoring:               &yes,
		ConnectionTracking:               &apiv1.ConnectionTracking{UDPTimeout: &n},
		Context:                          &name,
		CPUOptions:                       &apiv1.CPUOptions{NestedVirtualization: &name},
		AMISelectorTerms:                 []apiv1.AMISelectorTerm{{ID: "ami-1"}, {SSMParameter: "/my/ami"}},
		BlockDeviceMappings:              []apiv1.BlockDeviceMapping{{DeviceName: "/dev/xvda", EBS: &apiv1.EBS{VolumeInitializationRate: &n}}},
	}
	got := Unsupported(&spec)
	// associatePublicIPAddress, ipPrefixCount, detailedMonitoring,
	// connectionTracking, context, cpuOptions, volumeInitializationRate
	// and placementGroupSelector are honoured (the launch), and
	// ssmParameter (the class's AMI resolution); a nestedVirtualization
	// value that is not EC2's is refused.
	// networkInterfaces is honoured; a list without its primary interface
	// is refused, as Karpenter's CRD refuses it.
	want := []string{"spec.cpuOptions.nestedVirtualization", "spec.networkInterfaces"}
	if len(got) != len(want) {
		t.Fatalf("unsupported %q, want %d entries", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+": ") {
			t.Errorf("entry %d %q, want field %s", i, got[i], w)
		}
	}
	id := "pg-0123"
	for _, sel := range []*apiv1.PlacementGroupSelector{{}, {Name: &name, ID: &id}} {
		if u := Unsupported(&apiv1.EC2NodeClassSpec{PlacementGroupSelector: sel}); len(u) != 1 || !strings.HasPrefix(u[0], "spec.placementGroupSelector: ") {
			t.Errorf("placementGroupSelector %+v: %q, want it refused (the CRD's rule)", sel, u)
		}
	}
	if u := Unsupported(&apiv1.EC2NodeClassSpec{InstanceStorePolicy: &raid0}); u != nil {
		t.Errorf("RAID0 alone refused: %q", u)
	}
	for _, v := range []string{apiv1.NestedVirtualizationEnabled, apiv1.NestedVirtualizationDisabled} {
		if u := Unsupported(&apiv1.EC2NodeClassSpec{CPUOptions: &apiv1.CPUOptions{NestedVirtualization: &v}}); u != nil {
			t.Errorf("nestedVirtualization %s refused: %q", v, u)
		}
	}
	if u := Unsupported(&apiv1.EC2NodeClassSpec{CPUOptions: &apiv1.CPUOptions{}}); u != nil {
		t.Errorf("empty cpuOptions refused: %q", u)
	}
	if u := Unsupported(&apiv1.EC2NodeClassSpec{InstanceStorePolicy: &other}); len(u) != 1 || !strings.Contains(u[0], `"RAID10" is not a policy`) {
		t.Errorf("RAID10: %q", u)
	}
	if u := Unsupported(&apiv1.EC2NodeClassSpec{IPPrefixCount: &n}); u != nil {
		t.Errorf("ipPrefixCount alone refused: %q", u)
	}
	both := &apiv1.PlacementGroupSelector{Name: &name, ID: &id}
	cls := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{PlacementGroupSelector: both}}
	cls.Name = "default"
	cls.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue}}
	if why := NotReady(cls); !strings.Contains(why, "EC2NodeClass default sets fields Joinery does not support: spec.placementGroupSelector: set exactly one of name and id") {
		t.Errorf("NotReady %q", why)
	}
	st := Status(nil, Resolution{Subnets: []apiv1.SubnetStatus{{ID: "s"}}, SecurityGroups: []apiv1.SecurityGroupStatus{{ID: "g"}},
		AMIs: []apiv1.AMIStatus{{ID: "a"}}, InstanceProfile: "p", Unsupported: Unsupported(&cls.Spec)}, 1, metav1.Now())
	v := apiv1.FindCondition(st.Conditions, apiv1.ConditionValidationSucceeded)
	r := apiv1.FindCondition(st.Conditions, apiv1.ConditionReady)
	if v == nil || v.Status != metav1.ConditionFalse || v.Reason != "UnsupportedField" || r.Status != metav1.ConditionFalse || !strings.Contains(r.Message, "spec.placementGroupSelector") {
		t.Errorf("conditions %+v", st.Conditions)
	}
}

// PlacementGroupReady: True without a selector or with the group found
// (which the status carries); False with Karpenter's reasons when EC2 has
// no such group or the lookup failed; either makes Ready False.
func TestPlacementGroupReady(t *testing.T) {
	name := "hpc"
	base := Resolution{Subnets: []apiv1.SubnetStatus{{ID: "s"}}, SecurityGroups: []apiv1.SecurityGroupStatus{{ID: "g"}},
		AMIs: []apiv1.AMIStatus{{ID: "a"}}, InstanceProfile: "p"}
	pg := &apiv1.PlacementGroupStatus{ID: "pg-01", Name: name, Strategy: apiv1.PlacementStrategyCluster, Zone: "us-east-1a"}
	for _, c := range []struct {
		sel            *apiv1.PlacementGroupSelector
		pg             *apiv1.PlacementGroupStatus
		err            error
		status, reason string
	}{
		{nil, nil, nil, "True", apiv1.ConditionPlacementGroupReady},
		{&apiv1.PlacementGroupSelector{Name: &name}, pg, nil, "True", apiv1.ConditionPlacementGroupReady},
		{&apiv1.PlacementGroupSelector{Name: &name}, nil, nil, "False", "PlacementGroupNotFound"},
		{&apiv1.PlacementGroupSelector{Name: &name}, nil, errors.New("DescribePlacementGroups: throttled"), "False", "PlacementGroupResolutionFailed"},
	} {
		r := base
		r.PlacementGroupSelector, r.PlacementGroup, r.PlacementGroupErr = c.sel, c.pg, c.err
		st := Status(nil, r, 1, metav1.Now())
		got := apiv1.FindCondition(st.Conditions, apiv1.ConditionPlacementGroupReady)
		ready := apiv1.FindCondition(st.Conditions, apiv1.ConditionReady)
		if string(got.Status) != c.status || got.Reason != c.reason || string(ready.Status) != c.status {
			t.Errorf("%+v: PlacementGroupReady %+v, Ready %s", c, got, ready.Status)
		}
		if c.reason == "PlacementGroupNotFound" && got.Message != `Placement group "hpc" not found` {
			t.Errorf("message %q", got.Message)
		}
		if st.PlacementGroup != c.pg {
			t.Errorf("status placementGroup %+v, want %+v", st.PlacementGroup, c.pg)
		}
	}
}

// windows2022@latest reads EKS's one Windows parameter; its image serves
// only Windows types of its build; a pinned version is refused, and
// Windows Server 2025 before Kubernetes 1.35.
func TestWindowsAlias(t *testing.T) {
	a, err := ParseAlias("windows2022@latest")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := a.Parameters("1.37")
	if err != nil || len(ps) != 1 || ps[0].Path != "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.37/image_id" {
		t.Fatalf("parameters %+v, %v", ps, err)
	}
	amis := SelectAMIs([]Candidate{{Image: Image{ID: "ami-w", Architecture: "x86_64"}, Variants: ps[0].Variants}})
	win := map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}
	linux := map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
	if _, ok := AMIFor(amis, win); !ok {
		t.Errorf("the Windows image does not serve a Windows type: %+v", amis)
	}
	if _, ok := AMIFor(amis, linux); ok {
		t.Error("the Windows image serves a Linux type")
	}
	if _, err := ParseAlias("windows2022@v20261101"); err == nil {
		t.Error("a pinned Windows version was accepted")
	}
	w25, _ := ParseAlias("windows2025@latest")
	if _, err := w25.Parameters("1.34"); err == nil {
		t.Error("windows2025 on Kubernetes 1.34 was accepted")
	}
}
