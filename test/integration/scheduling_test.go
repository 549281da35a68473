//go:build integration

package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSchedulingParity runs pods with EBS volumes and topology spread on
// one world, with the real kube-scheduler (VolumeBinding, VolumeZone,
// NodeVolumeLimits, PodTopologySpread), the StatefulSet, Deployment and PV
// binder controllers, and the local kubelet's CSINode (the EBS CSI
// driver's count):
//
//   - a StatefulSet of 3 replicas whose claims are pre-bound to static
//     volumes in us-east-1a, b and c, with a zone spread, gets one node per
//     zone, each replica on the node in its volume's zone, all Running;
//   - 40 replicas with a volume each on a pool of m6i.xlarge only (27 EBS
//     attachments shared with ENIs: 26 volumes after the root volume;
//     cpu, memory and 58 pod slots would hold all 40) get two nodes, not
//     one, none above 26 volumes, all Running;
//   - an EC2NodeClass with instanceStorePolicy RAID0 launches m5d.xlarge
//     whose ephemeral storage is its 150 GB instance store (user data
//     asks for the array; the kubelet reads it from there), so a pod
//     asking 100G runs although the root volume has 50Gi;
//   - a Deployment of 2 spread over karpenter.sh/capacity-type (maxSkew 1,
//     one pod per node) gets one spot and one on-demand node, although
//     spot is cheaper.
func TestSchedulingParity(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	objs := readManifests(t, "../../examples/nodepools.yaml", "testdata/volumes.yaml", "testdata/topology.yaml")
	var base, sets []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "EC2NodeClass" && (o.GetName() == "default" || o.GetName() == "raid"),
			o.GetKind() == "NodePool" && (o.GetName() == "zonal" || o.GetName() == "ebs" || o.GetName() == "raid" || o.GetName() == "split"):
			base = append(base, o)
		case o.GetKind() == "StatefulSet", o.GetKind() == "Pod", o.GetKind() == "Deployment":
			sets = append(sets, o)
		}
	}
	if len(base) != 6 || len(sets) != 4 {
		t.Fatalf("manifests: %d class/pools, %d StatefulSets", len(base), len(sets))
	}
	e.apply(t, base)
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	for i, z := range zones {
		e.staticEBSVolume(t, fmt.Sprintf("data-db-%d", i), "10Gi", z)
	}
	for i := 0; i < 40; i++ {
		e.staticEBSVolume(t, fmt.Sprintf("data-ebs-%d", i), "1Gi", "")
	}
	waitFor(t, 2*time.Minute, "the 43 pre-bound claims Bound", func() bool {
		l, err := e.kc.CoreV1().PersistentVolumeClaims("default").List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		bound := 0
		for _, c := range l.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return bound == 43
	})
	e.apply(t, sets)

	t.Run("StatefulSetPinnedToItsVolumesZones", func(t *testing.T) {
		waitFor(t, 4*time.Minute, "3 db pods Running", func() bool { n, _ := e.readyPods("app=db"); return n == 3 })
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=db"})
		if err != nil {
			t.Fatal(err)
		}
		nodeZones := map[string]string{}
		for _, p := range pods.Items {
			n, err := e.kc.CoreV1().Nodes().Get(e.ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var ordinal int
			fmt.Sscanf(p.Name, "db-%d", &ordinal)
			if z := n.Labels[apiv1.LabelZone]; z != zones[ordinal] {
				t.Errorf("pod %s on %s in %s, want %s (its volume's zone)", p.Name, n.Name, z, zones[ordinal])
			}
			nodeZones[n.Name] = n.Labels[apiv1.LabelZone]
		}
		if len(nodeZones) != 3 {
			t.Errorf("db pods on nodes %v, want three nodes, one per zone", nodeZones)
		}
		if got := e.poolNodes(t, "zonal"); len(got) != 3 {
			t.Errorf("NodePool zonal has %d nodes %v, want 3", len(got), got)
		}
	})

	t.Run("AttachLimitSplitsNodes", func(t *testing.T) {
		waitFor(t, 4*time.Minute, "40 ebs pods Running", func() bool { n, _ := e.readyPods("app=ebs"); return n == 40 })
		_, byNode := e.readyPods("app=ebs")
		nodes := e.poolNodes(t, "ebs")
		if len(nodes) != 2 || len(byNode) != 2 {
			t.Fatalf("NodePool ebs has nodes %v, pods per node %v; want two nodes", nodes, byNode)
		}
		var counts []int
		for node, n := range byNode {
			cn, err := e.kc.StorageV1().CSINodes().Get(e.ctx, node, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("CSINode %s: %v", node, err)
			}
			limit := int32(-1)
			for _, d := range cn.Spec.Drivers {
				if d.Name == "ebs.csi.aws.com" && d.Allocatable != nil && d.Allocatable.Count != nil {
					limit = *d.Allocatable.Count
				}
			}
			if limit != 26 {
				t.Errorf("CSINode %s: EBS allocatable count %d, want 26 (m6i.xlarge: 27 less the root volume)", node, limit)
			}
			if n > 26 {
				t.Errorf("node %s holds %d pods with a volume each, above its limit of 26", node, n)
			}
			counts = append(counts, n)
		}
		sort.Ints(counts)
		t.Logf("ebs pods per node: %v", counts)
		// Both nodes were planned for the pods up front: each pod was
		// nominated once. (A plan blind to the limit buys one node, the
		// scheduler leaves 14 pods pending, and they are nominated again
		// to a second node bought later.)
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=Nominated"})
		if err != nil {
			t.Fatal(err)
		}
		nominated := map[string]int32{}
		for _, ev := range evs.Items {
			if strings.HasPrefix(ev.InvolvedObject.Name, "ebs-") {
				nominated[ev.InvolvedObject.Name] += ev.Count
			}
		}
		for i := 0; i < 40; i++ {
			if n := nominated[fmt.Sprintf("ebs-%d", i)]; n != 1 {
				t.Errorf("pod ebs-%d nominated %d times, want once", i, n)
			}
		}
	})

	t.Run("DeploymentSpreadOverCapacityType", func(t *testing.T) {
		waitFor(t, 4*time.Minute, "2 split pods Running", func() bool { n, _ := e.readyPods("app=split"); return n == 2 })
		byType := map[string]int{}
		for _, name := range e.poolNodes(t, "split") {
			n, err := e.kc.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			byType[n.Labels[apiv1.LabelCapacityType]]++
		}
		if byType["spot"] != 1 || byType["on-demand"] != 1 || len(byType) != 2 {
			t.Errorf("NodePool split nodes by capacity type %v, want one spot and one on-demand", byType)
		}
	})

	t.Run("RAID0InstanceStoreHoldsEphemeralStorage", func(t *testing.T) {
		waitFor(t, 4*time.Minute, "pod scratch (100G ephemeral storage) Running", func() bool {
			p, err := e.kc.CoreV1().Pods("default").Get(e.ctx, "scratch", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning
		})
		p, _ := e.kc.CoreV1().Pods("default").Get(e.ctx, "scratch", metav1.GetOptions{})
		n, err := e.kc.CoreV1().Nodes().Get(e.ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := n.Status.Capacity[corev1.ResourceEphemeralStorage]
		// The xfs filesystem on the array: 150 GB less what mkfs keeps (0.4%).
		if n.Labels[apiv1.LabelInstanceType] != "m5d.xlarge" || c.Value() != 149_400_000_000 {
			t.Errorf("node %s (%s): ephemeral-storage capacity %s, want 149.4G (xfs on m5d.xlarge's 150 GB instance store, RAID0)", n.Name, n.Labels[apiv1.LabelInstanceType], c.String())
		}
	})
}

// staticEBSVolume creates a PersistentVolume of the EBS CSI driver (node
// affinity on zone when given) and the claim default/<claim> pre-bound to
// it, both ways, as a restored or migrated volume is.
func (e *env) staticEBSVolume(t *testing.T, claim, size, zone string) {
	t.Helper()
	pvName := "pv-" + claim
	q := resource.MustParse(size)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + claim, FSType: "ext4"}},
		ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: claim},
	}}
	if zone != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: apiv1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}}}}
	}
	if _, err := e.kc.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	none := ""
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: claim}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &none, VolumeName: pvName,
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
	}}
	if _, err := e.kc.CoreV1().PersistentVolumeClaims("default").Create(e.ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// poolNodes are the names of the Nodes of a NodePool.
func (e *env) poolNodes(t *testing.T, pool string) []string {
	t.Helper()
	l, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}
