package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EBSVolumes is the solver's own count: a Node's or NodeClaim's resource
// list never carries it, and it is no extended resource.
func TestEBSVolumesStayOutOfResourceLists(t *testing.T) {
	var l List
	l[CPU], l[EBSVolumes] = 1500, 26
	rl := l.ToResourceList()
	if len(rl) != 1 || rl.Cpu().MilliValue() != 1500 {
		t.Errorf("ToResourceList = %v, want only cpu 1500m", rl)
	}
	back, unknown := FromResourceList(corev1.ResourceList{"attachable-volumes-aws-ebs": resource.MustParse("39"), corev1.ResourceMemory: resource.MustParse("1Gi")})
	if back[EBSVolumes] != 0 || back[Memory] != 1<<30 || len(unknown) != 0 {
		t.Errorf("FromResourceList = %v (unknown %v), want memory only", back, unknown)
	}
	if l.HasExtended() {
		t.Error("EBS volumes count as an extended resource")
	}
	if s := l.String(); s != "cpu=1500m attachable-volumes-aws-ebs=26" {
		t.Errorf("String() = %q", s)
	}
}
