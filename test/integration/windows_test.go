//go:build integration

package integration

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Windows2022 class launches EKS's Windows image with the PowerShell
// bootstrap; the node registers as Windows of its build, with one
// interface's addresses less one as its pod limit, and the Windows pods
// run there.
func TestWindowsNodePool(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t)
	e.applyWithDefaultClass(t, "testdata/windows.yaml")
	waitFor(t, 4*time.Minute, "iis Running", func() bool {
		n, _ := e.readyPods("app=iis")
		return n == 12
	})
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=windows"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("windows nodes: %v %v", nodes, err)
	}
	pods := int64(0)
	for _, n := range nodes.Items {
		it, _ := catalog.MustDefault().Get(n.Labels[apiv1.LabelInstanceType])
		if n.Labels[apiv1.LabelOS] != "windows" || n.Labels[apiv1.LabelWindowsBuild] != "10.0.20348" || n.Status.NodeInfo.OperatingSystem != "windows" {
			t.Errorf("node %s: os %q build %q", n.Name, n.Labels[apiv1.LabelOS], n.Labels[apiv1.LabelWindowsBuild])
		}
		if got := n.Status.Capacity.Pods().Value(); it == nil || got != int64(it.IPv4PerENI-1) {
			t.Errorf("node %s (%s): pods %d, want its IPv4 addresses per interface less one", n.Name, n.Labels[apiv1.LabelInstanceType], got)
		}
		pods += n.Status.Capacity.Pods().Value()
		inst, ok := e.w.EC2.Instance(n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:])
		if !ok {
			t.Fatalf("node %s: no instance %s", n.Name, n.Spec.ProviderID)
		}
		ud, _ := base64.StdEncoding.DecodeString(inst.UserData)
		im, _ := e.w.EC2.Image(inst.ImageID)
		t.Logf("%s: %s, image %s, pods %d; user data %.120q", n.Name, inst.InstanceType, im.Name, n.Status.Capacity.Pods().Value(), ud)
		if !strings.HasPrefix(string(ud), "<powershell>") || !strings.Contains(string(ud), "Start-EKSBootstrap.ps1") ||
			!strings.HasPrefix(im.Name, "Windows_Server-2022-English-Core-EKS_Optimized-1.37-") {
			t.Errorf("instance %s: image %q, user data %.80q", inst.ID, im.Name, ud)
		}
	}
	// kube-system's aws-node and kube-proxy (Linux DaemonSets) take no
	// slot on a Windows node.
	if pods < 12 {
		t.Errorf("%d pod slots on %d Windows nodes for 12 pods", pods, len(nodes.Items))
	}
}
