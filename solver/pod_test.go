package solver

import (
	"reflect"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/internal/testobj"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rl is testobj.ResourceList, short for the many lists here.
var rl = testobj.ResourceList

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func sidecar(name string, requests corev1.ResourceList) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := container(name, requests, nil)
	c.RestartPolicy = &always
	return c
}

func podWith(spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1",
		CreationTimestamp: metav1.Unix(1_700_000_123, 0)}, Spec: spec}
}

func TestPodFromK8sSumsContainersAndAddsOverhead(t *testing.T) {
	p := PodFromK8s(podWith(corev1.PodSpec{
		Containers: []corev1.Container{
			container("a", rl("cpu", "500m", "memory", "1Gi"), nil),
			container("b", rl("cpu", "250m", "memory", "512Mi", "ephemeral-storage", "2Gi"), nil),
		},
		Overhead: rl("cpu", "100m", "memory", "64Mi"),
	}))
	if got := p.Requests[resources.CPU]; got != 850 {
		t.Errorf("cpu = %dm, want 850m", got)
	}
	if got := p.Requests[resources.Memory]; got != (1024+512+64)<<20 {
		t.Errorf("memory = %d MiB, want 1600", got>>20)
	}
	if got := p.Requests[resources.EphemeralStorage]; got != 2<<30 {
		t.Errorf("ephemeral-storage = %d", got)
	}
	if got := p.Requests[resources.Pods]; got != 1 {
		t.Errorf("pods = %d, want 1", got)
	}
	if p.Namespace != "ns" || p.Name != "p" || p.UID != "uid-1" || p.CreationUnix != 1_700_000_123 || p.Key() != "ns/p" {
		t.Errorf("identity = %+v", p)
	}
}

func TestPodFromK8sRegularInitContainerCountsAsMax(t *testing.T) {
	p := PodFromK8s(podWith(corev1.PodSpec{
		InitContainers: []corev1.Container{
			container("migrate", rl("cpu", "2", "memory", "256Mi"), nil),
			container("warm", rl("cpu", "1", "memory", "3Gi"), nil),
		},
		Containers: []corev1.Container{
			container("app", rl("cpu", "1", "memory", "1Gi"), nil),
			container("log", rl("cpu", "500m", "memory", "1Gi"), nil),
		},
	}))
	// cpu: max(1.5 running, 2 migrate, 1 warm) = 2; memory: max(2Gi, 256Mi, 3Gi) = 3Gi.
	if p.Requests[resources.CPU] != 2000 || p.Requests[resources.Memory] != 3<<30 {
		t.Errorf("requests = %s, want cpu=2 memory=3Gi", p.Requests)
	}
}

func TestPodFromK8sNativeSidecars(t *testing.T) {
	// A sidecar runs for the pod's life: it adds to the running sum and to
	// every regular init container started after it, not before it.
	p := PodFromK8s(podWith(corev1.PodSpec{
		InitContainers: []corev1.Container{
			container("before", rl("cpu", "2200m"), nil), // alone: 2.2
			sidecar("mesh", rl("cpu", "500m", "memory", "128Mi")),
			container("after", rl("cpu", "2"), nil), // with mesh: 2.5
		},
		Containers: []corev1.Container{container("app", rl("cpu", "1", "memory", "1Gi"), nil)}, // running 1.5
	}))
	if p.Requests[resources.CPU] != 2500 {
		t.Errorf("cpu = %dm, want 2500m (init 'after' + sidecar)", p.Requests[resources.CPU])
	}
	if p.Requests[resources.Memory] != (1024+128)<<20 {
		t.Errorf("memory = %d MiB, want 1152 (app + sidecar)", p.Requests[resources.Memory]>>20)
	}

	// Without the late init container the running sum (app + sidecar) rules.
	p = PodFromK8s(podWith(corev1.PodSpec{
		InitContainers: []corev1.Container{sidecar("mesh", rl("cpu", "500m")), container("setup", rl("cpu", "1200m"), nil)},
		Containers:     []corev1.Container{container("app", rl("cpu", "1"), nil)},
	}))
	if p.Requests[resources.CPU] != 1700 {
		t.Errorf("cpu = %dm, want 1700m (max(1.5 running, 1.2+0.5 setup))", p.Requests[resources.CPU])
	}
}

func TestPodFromK8sRequestsDefaultFromLimits(t *testing.T) {
	p := PodFromK8s(podWith(corev1.PodSpec{Containers: []corev1.Container{
		container("only-limits", nil, rl("cpu", "2", "memory", "1Gi", "nvidia.com/gpu", "4")),
		container("both", rl("cpu", "100m"), rl("cpu", "1", "memory", "2Gi")), // request wins for cpu, limit fills memory
	}}))
	want := resources.List{resources.CPU: 2100, resources.Memory: 3 << 30, resources.NvidiaGPU: 4, resources.Pods: 1}
	if p.Requests != want {
		t.Errorf("requests = %s, want %s", p.Requests, want)
	}
}

func TestPodFromK8sPodLevelResources(t *testing.T) {
	spec := corev1.PodSpec{
		Containers: []corev1.Container{container("a", rl("cpu", "1", "memory", "1Gi"), nil), container("b", rl("cpu", "1"), nil)},
		Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "3")},
	}
	p := PodFromK8s(podWith(spec))
	if p.Requests[resources.CPU] != 3000 || p.Requests[resources.Memory] != 1<<30 {
		t.Errorf("requests = %s, want pod-level cpu=3 and container memory=1Gi", p.Requests)
	}
}

func TestPodFromK8sConstraints(t *testing.T) {
	p := PodFromK8s(podWith(corev1.PodSpec{
		Containers:   []corev1.Container{container("a", rl("cpu", "1", "example.com/foo", "1", "vendor.io/bar", "2"), nil)},
		NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"},
		Tolerations:  []corev1.Toleration{tol("k", "v", corev1.TaintEffectNoSchedule)},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpGt, Values: []string{"3"}},
					{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"spot"}},
				}},
				{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}},
			}},
		}},
	}))
	if !reflect.DeepEqual(p.UnknownResources, []string{"example.com/foo", "vendor.io/bar"}) {
		t.Errorf("unknown = %v", p.UnknownResources)
	}
	want := [][]apiv1.NodeSelectorRequirementWithMinValues{
		{{Key: "karpenter.k8s.aws/instance-cpu", Operator: "Gt", Values: []string{"3"}}, {Key: "karpenter.sh/capacity-type", Operator: "In", Values: []string{"spot"}}},
		{{Key: apiv1.LabelHostname, Operator: "In", Values: []string{"node-1"}}},
	}
	if !reflect.DeepEqual(p.RequiredAffinity, want) {
		t.Errorf("affinity = %+v", p.RequiredAffinity)
	}
	if p.NodeSelector["kubernetes.io/arch"] != "arm64" || len(p.Tolerations) != 1 {
		t.Errorf("selector/tolerations = %v %v", p.NodeSelector, p.Tolerations)
	}
}

// A pod with DRA resource claims is refused, naming every claim; the same
// pod without them is not. PodWithVolumes keeps the DRA refusal ahead of
// a volume's (its claim does not exist either).
func TestPodFromK8sRefusesDRAClaims(t *testing.T) {
	tmpl := "gpu-template"
	spec := corev1.PodSpec{
		Containers: []corev1.Container{container("c", rl("cpu", "1"), nil)},
		ResourceClaims: []corev1.PodResourceClaim{
			{Name: "gpu-claim", ResourceClaimTemplateName: &tmpl},
			{Name: "nic"},
		},
	}
	want := "pod requests DRA resource claims (spec.resourceClaims: gpu-claim, nic); Joinery does not provision for dynamic resource allocation"
	if got := PodFromK8s(podWith(spec)).Refused; got != want {
		t.Errorf("Refused = %q, want %q", got, want)
	}
	plain := spec
	plain.ResourceClaims = nil
	if got := PodFromK8s(podWith(plain)).Refused; got != "" {
		t.Errorf("pod without claims: Refused = %q", got)
	}
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"}}}}
	if got := PodWithVolumes(podWith(spec), VolumeObjects{}, nil).Refused; got != want {
		t.Errorf("PodWithVolumes: Refused = %q, want the DRA refusal", got)
	}
	if got := PodWithVolumes(podWith(plain), VolumeObjects{}, nil).Refused; got != "" {
		t.Errorf("PodWithVolumes without claims or volumes: Refused = %q", got)
	}
}

// The solver never places a DRA pod: it is unschedulable with the refusal
// as its reason, while a pod of the same size gets a node.
func TestSolveReportsDRAPodUnschedulable(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{container("c", rl("cpu", "1", "memory", "1Gi"), nil)}}
	plain := PodFromK8s(podWith(spec))
	spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu-claim"}}
	k8s := podWith(spec)
	k8s.Name = "with-dra"
	dra := PodFromK8s(k8s)
	in := Input{Pods: []Pod{plain, dra}, NodePools: []NodePool{simplePool(t, "general", 10, "m6i", "")}}
	plan := Solve(in)
	checkPlanInvariants(t, in, &plan)
	want := "pod requests DRA resource claims (spec.resourceClaims: gpu-claim); Joinery does not provision for dynamic resource allocation"
	if reason, ok := unschedulable(&plan, "ns/with-dra"); !ok || reason != want {
		t.Errorf("ns/with-dra: unschedulable %v, reason %q; want %q", ok, reason, want)
	}
	if claimOf(&plan, "ns/with-dra") != nil || claimOf(&plan, "ns/p") == nil || len(plan.NewNodeClaims) != 1 {
		t.Errorf("claims %+v: want one, for ns/p only", plan.NewNodeClaims)
	}
}
