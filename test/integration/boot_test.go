//go:build integration

package integration

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/sim/kubelet"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
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
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
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

// waveDeployment is a Deployment of pause pods labelled app=name and
// wave=group, each requesting cpu and mem.
func waveDeployment(name, group string, replicas int, cpu, mem string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s, wave: %[2]s}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: pause
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources: {requests: {cpu: %[4]s, memory: %[5]s}}
`, name, group, replicas, cpu, mem)
}

// bootWavePhases boot a node in 45 s from launch to Ready (5 s pending,
// 30 s to registration, 10 s to Ready).
var bootWavePhases = world.BootPhases{Pending: 5 * time.Second, Register: 30 * time.Second, NetworkReady: 10 * time.Second}

// TestNoSecondWaveWhileNodesBoot: 300 pending pods and nodes that take
// 45 s from launch to Ready (5 s pending, 30 s to registration, 10 s to
// Ready), about 15 to a node: the NodeClaims launched are the first
// plan's, none more, however long the pods wait for them. Every Node registers NotReady with the
// not-ready taint first, and ends Ready without it.
func TestNoSecondWaveWhileNodesBoot(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) { o.Boot = bootWavePhases }, true)
	registered := watchRegistrations(t, e)

	dep, err := kube.ParseManifests([]byte(waveDeployment("wave", "wave", 300, "250m", "256Mi")))
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
	e.waitRunningWithin(t, "app=wave", 300, 6*time.Minute)
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

// watchRegistrations records every Node Joinery launched as it was created.
func watchRegistrations(t *testing.T, e *env) func() []corev1.Node {
	t.Helper()
	w, err := e.kc.CoreV1().Nodes().Watch(e.ctx, launchedNodes)
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
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
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

// TestNodesOpenToThePodsLaunchedForThem: pods of two shapes, nodes that
// boot for 45 s and come Ready within a second or two of each other. Each
// Node registers closed (joinery.sh/opening) and opens once the pods it
// was launched for are pointed at it, so the first Nodes to open are not
// filled with whichever pods the scheduler takes first: the pods land on
// the nodes launched for them, and the first plan's NodeClaims hold them
// (nearly) all.
func TestNodesOpenToThePodsLaunchedForThem(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) { o.Boot = bootWavePhases }, true)
	opened := watchOpening(t, e)
	mixed := waveDeployment("wave-big", "mixed", 40, "1500m", "1536Mi") + "\n---\n" + waveDeployment("wave-small", "mixed", 200, "250m", "256Mi")
	objs, err := kube.ParseManifests([]byte(bootWavePool + "\n---\n" + mixed))
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, objs)
	dc := dynamicClient(t, e)
	nominated := map[string]string{} // pod UID -> the NodeClaim it was launched for, as the first node opens
	waitFor(t, 3*time.Minute, "the first node Ready", func() bool {
		for _, nc := range e.nodeClaimObjs(t, dc) {
			for _, uid := range strings.Split(nc.Annotations[capacity.AnnotationNominatedPods], ",") {
				if uid != "" {
					nominated[uid] = nc.Name
				}
			}
		}
		nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
		return err == nil && slices.ContainsFunc(nodes.Items, func(n corev1.Node) bool { return nodeIsReady(&n) })
	})
	e.waitRunningWithin(t, "wave=mixed", 240, 6*time.Minute)
	claims := e.nodeClaimObjs(t, dc)
	batches := map[string]int{}
	nodeOf := map[string]string{}
	for _, nc := range claims {
		batches[nc.Labels[activities.LabelProvisionBatch]]++
		nodeOf[nc.Name] = nc.Status.NodeName
	}
	// The scheduler places a pod on its pointed node first: with every
	// node closed until its pods are pointed, most land where the plan put
	// them (84% in a run, 71-88% beside other tests; a pod whose node has
	// spare room may still go elsewhere, and a pointer cleared by a failed
	// attempt just before its node opens is written again). With the nodes
	// open at Ready, 2% did, and 2 NodeClaims more were bought.
	landed, pods := 0, e.podsOf(t, "wave=mixed")
	for _, p := range pods {
		if claim, ok := nominated[string(p.UID)]; ok && nodeOf[claim] == p.Spec.NodeName {
			landed++
		}
	}
	t.Logf("%d of %d pods on the node launched for them", landed, len(pods))
	if landed < len(pods)/2 {
		t.Errorf("%d of %d pods on the node launched for them, want at least half", landed, len(pods))
	}
	// Most often the first plan's NodeClaims are all. On a loaded machine
	// the kube-scheduler takes seconds to retry every pending pod after a
	// node opens, and a pod it tries while its own node is still closed
	// loses its pointer (it is pointed again before that node opens, but
	// the clear may reach Joinery after the opening): such a pod may take
	// another's room, and a later plan buys a node or two for the pods
	// left without one (CI: 1-3 of 30).
	first := slices.Max(slices.Collect(maps.Values(batches)))
	if extra := len(claims) - first; extra > max(1, first/10) || len(e.w.EC2.Instances()) != len(claims) {
		t.Errorf("%d instances for %d NodeClaims in %d provisioning batches %v: want the first plan's and at most %d more", len(e.w.EC2.Instances()), len(claims), len(batches), batches, max(1, first/10))
	}
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	seen := opened()
	for _, n := range nodes.Items {
		if !seen[n.Name] || hasTaint(n.Spec.Taints, apiv1.TaintKeyOpening, "") {
			t.Errorf("node %s: opening taint seen %v, taints now %v; want it held, then removed", n.Name, seen[n.Name], n.Spec.Taints)
		}
	}
}

// watchOpening records the Nodes seen with the opening taint. The watch
// resumes where it broke off (the API server may close a watch at any
// time), from the list's resource version.
func watchOpening(t *testing.T, e *env) func() map[string]bool {
	t.Helper()
	l, err := e.kc.CoreV1().Nodes().List(e.ctx, launchedNodes)
	if err != nil {
		t.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(e.ctx, l.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = launchedNodes.LabelSelector
			return e.kc.CoreV1().Nodes().Watch(ctx, opts)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && hasTaint(n.Spec.Taints, apiv1.TaintKeyOpening, "") {
				mu.Lock()
				seen[n.Name] = true
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}
