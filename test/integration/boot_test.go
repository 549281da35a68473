//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kubelet"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestAL2UserDataOnAnAL2023ImageNeverJoins: the AL2023 image's nodeadm
// refuses bootstrap.sh user data, so the instance never registers; the
// registration TTL terminates it and the NodeClaim's saga says so.
func TestAL2UserDataOnAnAL2023ImageNeverJoins(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.RegistrationTTL = 20 * time.Second })
	e.applyYAML(t, readTestdata(t, "mismatch-pool.yaml"))
	launched := e.waitLaunched(t)
	in := launched[0]
	if im, _ := e.w.EC2.Image(in.ImageID); kubelet.FamilyOfImage(im.Name) != kubelet.FamilyAL2023 {
		t.Fatalf("instance %s runs image %q, want an AL2023 one", in.ID, im.Name)
	}
	waitFor(t, 2*time.Minute, "the never-joined instance terminated", func() bool {
		i, ok := e.w.EC2.Instance(in.ID)
		return ok && (i.State == "terminated" || i.State == "shutting-down")
	})
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 0 {
		t.Fatalf("a node joined from user data its image does not run: %v (%v)", nodes, err)
	}
	var st workflows.NodeClaimStatus
	err = e.tc.GetWorkflow(e.ctx, "nodeclaim/"+in.Tags[apiv1.TagNodeClaim], "").Get(e.ctx, &st)
	if err == nil || !strings.Contains(err.Error(), "not Ready within registration TTL") {
		t.Fatalf("nodeclaim/%s ended with %v, want the registration TTL failure", in.Tags[apiv1.TagNodeClaim], err)
	}
}

const bootWavePool = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: wave}
spec:
  role: KarpenterNodeRole-production
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: production-eks}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: production-eks}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: wave}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: wave}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i, c6i]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [xlarge]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1h
`

const bootWaveDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: wave}
spec:
  replicas: 300
  selector: {matchLabels: {app: wave}}
  template:
    metadata: {labels: {app: wave}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: pause
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources: {requests: {cpu: 250m, memory: 256Mi}}
`

// TestNoSecondWaveWhileNodesBoot: 300 pending pods and nodes that take
// 45 s from launch to Ready (5 s pending, 30 s to registration, 10 s to
// Ready), about 15 to a node: the NodeClaims launched are the first
// plan's, none more, however long the pods wait for them. Every Node registers NotReady with the
// not-ready taint first, and ends Ready without it.
func TestNoSecondWaveWhileNodesBoot(t *testing.T) {
	parallel(t)
	phases := world.BootPhases{Pending: 5 * time.Second, Register: 30 * time.Second, NetworkReady: 10 * time.Second}
	e := startEnvWorld(t, func(o *world.Options) { o.Boot = phases }, true)
	registered := watchRegistrations(t, e)

	dep, err := kube.ParseManifests([]byte(bootWaveDeployment))
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, dep)
	waitFor(t, 2*time.Minute, "300 pods the scheduler found no node for", func() bool {
		n := 0
		for _, p := range e.podsOf(t, "app=wave") {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					n++
				}
			}
		}
		return n == 300
	})
	pool, err := kube.ParseManifests([]byte(bootWavePool))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e.apply(t, pool)
	waitFor(t, 6*time.Minute, "300 pods Running", func() bool {
		n := 0
		for _, p := range e.podsOf(t, "app=wave") {
			if p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == 300
	})
	t.Logf("300 pods Running %s after the NodePool", time.Since(start).Round(time.Second))

	claims := e.nodeClaimObjs(t, dynamicClient(t, e))
	batches := map[string]int{}
	for _, nc := range claims {
		batches[nc.Labels[activities.LabelProvisionBatch]]++
		if !apiv1.IsConditionTrue(nc.Status.Conditions, apiv1.ConditionInitialized) {
			t.Errorf("NodeClaim %s not Initialized", nc.Name)
		}
	}
	instances := e.w.EC2.Instances()
	if len(batches) != 1 || len(instances) != len(claims) {
		t.Errorf("%d instances launched for %d NodeClaims in %d provisioning batches %v: want one batch, one instance each", len(instances), len(claims), len(batches), batches)
	}
	if len(batches) != 1 { // what each plan saw, and when the nodes came
		b, _ := os.ReadFile(filepath.Join(e.dir, "joinery.log"))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "provisioning plan") || strings.Contains(l, "\"provisioned\"") || strings.Contains(l, "node ready") || strings.Contains(l, "node registered") {
				t.Log(l)
			}
		}
	}
	for _, in := range instances {
		if in.State != "running" {
			t.Errorf("instance %s is %s", in.ID, in.State)
		}
	}
	boots := e.w.BootTimes()
	if len(boots) != len(claims) || boots[0] < 45*time.Second {
		t.Errorf("boot times %v for %d NodeClaims, want one each, none under 45 s", boots, len(claims))
	}
	t.Logf("%d NodeClaims, boot times launch→Ready %v … %v", len(claims), boots[0].Round(100*time.Millisecond), boots[len(boots)-1].Round(100*time.Millisecond))
	checkRegisteredNotReady(t, e, registered())
}

// watchRegistrations records every Node as it was created.
func watchRegistrations(t *testing.T, e *env) func() []corev1.Node {
	t.Helper()
	w, err := e.kc.CoreV1().Nodes().Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var added []corev1.Node
	go func() {
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type == watch.Added {
				mu.Lock()
				added = append(added, *n)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() []corev1.Node {
		mu.Lock()
		defer mu.Unlock()
		return append([]corev1.Node(nil), added...)
	}
}

// checkRegisteredNotReady: each Node was created NotReady (the kubelet's
// CNI message) with node.kubernetes.io/not-ready:NoSchedule, and is now
// Ready without it.
func checkRegisteredNotReady(t *testing.T, e *env, added []corev1.Node) {
	t.Helper()
	if len(added) == 0 {
		t.Fatal("no Node registrations seen")
	}
	for _, n := range added {
		ready := corev1.NodeCondition{}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c
			}
		}
		if ready.Status != corev1.ConditionFalse || ready.Message != kubelet.MessageCNINotReady || !hasTaint(n.Spec.Taints, corev1.TaintNodeNotReady, "") {
			t.Errorf("node %s registered with Ready %s %q, taints %v", n.Name, ready.Status, ready.Message, n.Spec.Taints)
		}
	}
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !nodeIsReady(&n) || hasTaint(n.Spec.Taints, corev1.TaintNodeNotReady, "") {
			t.Errorf("node %s now: Ready %v, taints %v", n.Name, nodeIsReady(&n), n.Spec.Taints)
		}
	}
}

func (e *env) podsOf(t *testing.T, selector string) []corev1.Pod {
	t.Helper()
	l, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}
