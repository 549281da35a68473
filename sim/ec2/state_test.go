package ec2

import (
	"path/filepath"
	"testing"
	"time"
)

func TestStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ec2.json")
	running := make(chan Instance, 4)
	s := New(Options{BootDelay: -1, TerminateDelay: -1, OnRunning: func(i Instance) { running <- i }})
	in1, err := s.launchForTest("m5.large", "on-demand")
	if err != nil {
		t.Fatal(err)
	}
	in2, err := s.launchForTest("c6g.large", "spot")
	if err != nil {
		t.Fatal(err)
	}
	<-running
	<-running
	if _, err := s.PublishImageRelease("v20261201"); err != nil {
		t.Fatal(err)
	}
	lt, err := s.CreateLaunchTemplate("kept", LaunchTemplateData{ImageID: in1.ImageID, UserData: "YQ==",
		MetadataOptions: &MetadataOptions{HTTPTokens: "required"}}, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSubnetAvailable(s.subnets[1].id, 3); err != nil {
		t.Fatal(err)
	}
	custom, err := s.AddImage(Image{Name: "custom", Architecture: "arm64", Tags: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(path); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r := New(Options{BootDelay: -1, TerminateDelay: -1})
	if err := r.LoadState(path); err != nil {
		t.Fatal(err)
	}
	got := r.Instances()
	if len(got) != 2 || got[0].ID != in1.ID || got[1].ID != in2.ID || got[0].State != StateRunning ||
		got[1].PrivateDNSName != in2.PrivateDNSName || got[1].CapacityType != "spot" {
		t.Fatalf("restored %+v", got)
	}
	if got[0].ImageID == "" || got[0].ImageID != in1.ImageID || got[0].UserData != "IyEvYmluL3NoCg==" {
		t.Errorf("restored launch inputs %+v", got[0])
	}
	if rl := r.Releases(); len(rl) != 3 || rl[2].Version != "v20261201" {
		t.Errorf("restored releases %+v", rl)
	}
	if v, ver, _, ok := r.SSMParameter("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"); !ok || ver != 3 ||
		v != imageID("amazon-eks-node-al2023-x86_64-standard-1.37-v20261201") {
		t.Errorf("restored recommended = %s v%d %v", v, ver, ok)
	}
	if rlt, ok := r.LaunchTemplate("kept"); !ok || rlt.ID != lt.ID || rlt.Tags["k"] != "v" || rlt.Data.MetadataOptions.HTTPTokens != "required" {
		t.Errorf("restored template %+v %v", rlt, ok)
	}
	if r.subnets[1].available() != 3 {
		t.Errorf("restored subnet free addresses %d, want 3", r.subnets[1].available())
	}
	if im, ok := r.Image(custom.ID); !ok || im.Tags["team"] != "a" || im.Architecture != "arm64" {
		t.Errorf("restored custom image %+v %v", im, ok)
	}
	// A new launch must not reuse an address of a restored instance.
	in3, err := r.launchForTest("m5.large", "on-demand")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if g.PrivateIP == in3.PrivateIP || g.ID == in3.ID {
			t.Fatalf("new instance %+v collides with restored %+v", in3, g)
		}
	}
}

// launchForTest launches one instance of a type in the first subnet, as a
// CreateFleet override would.
func (s *Server) launchForTest(instanceType, capacityType string) (Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, _ := s.opts.Catalog.Get(instanceType)
	img := s.ssm["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/"+ec2Arch(it.Arch)+"/standard/recommended/image_id"].value
	lt := &LaunchTemplate{ID: "lt-0123456789abcdef0", Name: "test", Data: LaunchTemplateData{ImageID: img, UserData: "IyEvYmluL3NoCg=="}}
	o := &fleetOverride{it: it, subnet: s.subnets[0], lt: lt, imageID: img, image: s.images[img]}
	in, err := s.launchLocked(o, capacityType, "fleet-test", "", map[string]string{}, time.Now())
	if err != nil {
		return Instance{}, err
	}
	s.bootLocked(in)
	return in.snapshot(), nil
}
