package catalog

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver/resources"
)

// A Windows class launches a type as a Windows node: os and build labels,
// one interface's addresses as its pod limit, amd64 only; a Linux class
// gets the type itself.
func TestInstanceTypeForWindows(t *testing.T) {
	cat := MustDefault()
	m5, _ := cat.Get("m5.large")
	win := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "windows2022@latest"}}}}
	linux := &apiv1.EC2NodeClass{Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
	if m5.For(linux) != m5 || m5.For(nil) != m5 {
		t.Error("a Linux class changed the type")
	}
	w := m5.For(win)
	if w == m5 || w != m5.For(win) {
		t.Fatal("the Windows copy is not made once")
	}
	l := w.Labels()
	if l[apiv1.LabelOS] != "windows" || l[apiv1.LabelWindowsBuild] != "10.0.20348" || m5.Labels()[apiv1.LabelOS] != "linux" {
		t.Errorf("labels: windows %v / linux %v", l[apiv1.LabelOS], m5.Labels()[apiv1.LabelOS])
	}
	// m5.large: 10 IPv4 addresses per interface; Linux's ENI max pods 29.
	if got := w.ShapeOf(LaunchOf(&win.Spec)).Capacity[resources.Pods]; got != 9 {
		t.Errorf("Windows m5.large pods %d, want 9", got)
	}
	if w.ShapeOf(LaunchOf(&win.Spec)).Capacity == m5.ShapeOf(LaunchOf(&linux.Spec)).Capacity {
		t.Error("the Windows node's shape is the Linux node's")
	}
	if win.Spec.RootVolumeSize() != 50<<30 {
		t.Errorf("Windows root volume %d, want 50 GiB", win.Spec.RootVolumeSize())
	}
	m6g, _ := cat.Get("m6g.large")
	if why := m6g.Unlaunchable(win); why == "" || !m5.Launchable(win) {
		t.Errorf("arm64 under a Windows class: %q; m5.large launchable %v", why, m5.Launchable(win))
	}
}
