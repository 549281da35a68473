//go:build integration

// Integration tests: a real control plane (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager, kwok) from hack/kube/build.sh, or from
// $JOINERY_KUBE_BIN when set.
//
//	go test -tags integration ./sim/kube/
package kube_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/joinery/joinery/sim/internal/freeport"
	"github.com/joinery/joinery/sim/kube"
)

var nodePoolGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}

func TestClusterEndToEnd(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	opts := kube.Options{StateDir: dir, Ports: freePorts(t), BinDir: os.Getenv("JOINERY_KUBE_BIN"), Log: testLog{t}}

	t0 := time.Now()
	c, err := kube.Start(ctx, opts)
	if err != nil && strings.Contains(err.Error(), "address already in use") {
		// A process beside the test took a picked port between the pick
		// and the bind: pick again, in a fresh folder.
		dir = t.TempDir()
		opts.StateDir, opts.Ports = dir, freePorts(t)
		t0 = time.Now()
		c, err = kube.Start(ctx, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	t.Logf("fresh start: %.2fs", time.Since(t0).Seconds())
	opts.BinDir = c.BinDir() // later starts skip the build script

	// The kubeconfig file works for a client that reads it like kubectl does.
	kcfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubernetes.NewForConfigOrDie(kcfg).Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.37.2" {
		t.Fatalf("server version %v, %v", v, err)
	}

	// Guard rails: the same state dir while running, and the same ports.
	other := opts
	other.Ports = freePorts(t)
	if _, err := kube.Start(ctx, other); err == nil || !strings.Contains(err.Error(), "still running on "+dir) {
		t.Errorf("second Start on a running state dir: %v", err)
	} else {
		t.Logf("second Start on the same dir: %v", err)
	}
	other = opts
	other.StateDir = t.TempDir()
	if _, err := kube.Start(ctx, other); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("port %d (etcd) is in use", opts.Ports.Etcd)) {
		t.Errorf("Start on taken ports: %v", err)
	} else {
		t.Logf("Start on taken ports: %v", err)
	}

	// CRDs (twice: the second run takes the update path), then the example NodePools.
	cfg := c.RESTConfig()
	for range 2 {
		if err := kube.InstallCRDs(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	applyFile(t, ctx, c, "testdata/nodepools.yaml")
	dyn := dynamic.NewForConfigOrDie(cfg)
	np, err := dyn.Resource(nodePoolGVR).Get(ctx, "general-purpose", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w, _, _ := unstructured.NestedInt64(np.Object, "spec", "weight"); w != 100 {
		t.Errorf("NodePool general-purpose weight %d, want 100", w)
	}
	if reqs, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "requirements"); len(reqs) != 4 {
		t.Errorf("NodePool general-purpose has %d requirements, want 4", len(reqs))
	}

	// A kwok Node, a Pod the real scheduler binds to it, and kwok running it.
	cs := kubernetes.NewForConfigOrDie(cfg)
	node := fakeNode("kwok-node-1")
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		// The address the VPC CNI would give it: kwok starts a pod only
		// once it has one (no CNI runs on this bare control plane).
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default",
			Annotations: map[string]string{"vpc.amazonaws.com/pod-ips": "10.0.1.10"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}}},
	}
	tPod := time.Now()
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod web-0 Running on kwok-node-1", func() (bool, string) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName == "kwok-node-1" && p.Status.Phase == corev1.PodRunning,
			fmt.Sprintf("nodeName=%q phase=%s conditions=%v", p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	})
	t.Logf("pod bound by kube-scheduler and Running via kwok in %.2fs", time.Since(tPod).Seconds())
	waitFor(t, 30*time.Second, "node kwok-node-1 Ready", func() (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, string(cond.Status)
			}
		}
		return false, "no Ready condition"
	})

	// A Job: the controller-manager creates its pod, kwok completes it.
	one := int32(1)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "default"},
		Spec: batchv1.JobSpec{Completions: &one, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"vpc.amazonaws.com/pod-ips": "10.0.1.11"}}, // as the CNI would
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}}},
	}
	if _, err := cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "job once succeeded", func() (bool, string) {
		j, err := cs.BatchV1().Jobs("default").Get(ctx, "once", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("active=%d succeeded=%d failed=%d", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	})

	// Stop, then resume on the same directory: the objects are still there.
	t1 := time.Now()
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	t.Logf("stop: %.2fs", time.Since(t1).Seconds())
	if pids, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid")); len(pids) != 0 {
		t.Errorf("pid files left after Stop: %v", pids)
	}
	t2 := time.Now()
	c2, err := kube.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Stop()
	t.Logf("resume start: %.2fs", time.Since(t2).Seconds())
	dyn = dynamic.NewForConfigOrDie(c2.RESTConfig())
	for _, name := range []string{"general-purpose", "memory-optimized", "graviton-spot", "gpu"} {
		if _, err := dyn.Resource(nodePoolGVR).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("NodePool %s after resume: %v", name, err)
		}
	}
	cs = kubernetes.NewForConfigOrDie(c2.RESTConfig())
	if p, err := cs.CoreV1().Pods("default").Get(ctx, "web-0", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "kwok-node-1" {
		t.Errorf("pod web-0 after resume: %v", err)
	}
	if err := c2.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for _, port := range []int{opts.Ports.Etcd, opts.Ports.APIServer, opts.Ports.Kwok} {
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
			t.Errorf("port %d still taken after Stop: %v", port, err)
		} else {
			l.Close()
		}
	}
}

// TestNoOrphansWhenParentDies SIGKILLs a process running a cluster and checks
// that the kernel takes etcd, kube-apiserver and the rest down with it, and that
// a new Start on the same directory resumes the cluster.
func TestNoOrphansWhenParentDies(t *testing.T) {
	if os.Getenv("JOINERY_KUBE_ORPHAN_HELPER") != "" {
		t.Skip("helper process")
	}
	dir := t.TempDir()
	ports := freePorts(t)
	bin := os.Getenv("JOINERY_KUBE_BIN")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "JOINERY_KUBE_ORPHAN_HELPER="+dir, "JOINERY_KUBE_ORPHAN_PORTS="+portsString(ports))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ready := make(chan error, 1)
	var buf bytes.Buffer
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			buf.WriteString(sc.Text() + "\n")
			if sc.Text() == "HELPER READY" {
				ready <- nil
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- errors.New("helper exited")
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%v:\n%s", err, buf.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("helper not ready:\n%s", buf.String())
	}
	pids := map[string]int{}
	for _, name := range kube.Binaries {
		b, err := os.ReadFile(filepath.Join(dir, "run", name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pids[name], _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, 10*time.Second, "children of the killed process gone", func() (bool, string) {
		var alive []string
		for name, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				alive = append(alive, fmt.Sprintf("%s (%d)", name, pid))
			}
		}
		return len(alive) == 0, "alive: " + strings.Join(alive, ", ")
	})

	c, err := kube.Start(t.Context(), kube.Options{StateDir: dir, Ports: ports, BinDir: bin, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if _, err := kubernetes.NewForConfigOrDie(c.RESTConfig()).CoreV1().ConfigMaps("default").Get(t.Context(), "before-crash", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap written before the crash: %v", err)
	}
}

// TestOrphanHelper runs only as TestNoOrphansWhenParentDies's child: it starts a
// cluster, writes a ConfigMap, says so and waits to be killed.
func TestOrphanHelper(t *testing.T) {
	dir := os.Getenv("JOINERY_KUBE_ORPHAN_HELPER")
	if dir == "" {
		t.Skip("runs only as a helper process")
	}
	c, err := kube.Start(context.Background(), kube.Options{
		StateDir: dir, Ports: parsePorts(os.Getenv("JOINERY_KUBE_ORPHAN_PORTS")), BinDir: os.Getenv("JOINERY_KUBE_BIN"), Log: os.Stdout,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(c.RESTConfig()).CoreV1().ConfigMaps("default").Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-crash"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("HELPER READY")
	time.Sleep(10 * time.Minute)
}

// TestCorruptEtcdData damages etcd's database between runs: Start must fail
// quickly, naming the state directory and --fresh, and Fresh must recover.
func TestCorruptEtcdData(t *testing.T) {
	dir := t.TempDir()
	opts := kube.Options{StateDir: dir, Ports: freePorts(t), BinDir: os.Getenv("JOINERY_KUBE_BIN"), Log: testLog{t}, ReadyTimeout: 30 * time.Second}
	c, err := kube.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "etcd", "member", "snap", "db")
	if err := os.WriteFile(db, bytes.Repeat([]byte("not a bbolt database "), 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = kube.Start(t.Context(), opts)
	if err == nil {
		t.Fatal("Start on a corrupt etcd database succeeded")
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	t.Logf("after %.2fs: %v", time.Since(t0).Seconds(), err)
	if !strings.Contains(first, "corrupt or unusable: remove "+dir+" or run with --fresh") || !strings.Contains(err.Error(), "etcd.log") {
		t.Errorf("error does not say what to do:\n%v", err)
	}
	opts.Fresh = true
	c, err = kube.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
}

// applyFile creates every object of a multi-document YAML file, mapping kinds
// to resources through discovery, as kubectl apply would.
func applyFile(t *testing.T, ctx context.Context, c *kube.Cluster, path string) {
	t.Helper()
	cfg := c.RESTConfig()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))
	dyn := dynamic.NewForConfigOrDie(cfg)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace("default")
		}
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
}

// fakeNode is a Node as an autoscaler registers it in the local world: kwok
// manages it (annotation), and capacity/allocatable come from the instance type.
func fakeNode(name string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kube.KwokNodeAnnotation: kube.KwokNodeAnnotationValue},
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
				"node.kubernetes.io/instance-type": "m6i.xlarge", "topology.kubernetes.io/zone": "us-east-1a",
				"karpenter.sh/capacity-type": "on-demand", "karpenter.sh/nodepool": "general-purpose",
			},
		},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last: %s)", timeout, what, last)
}

func freePorts(t *testing.T) kube.Ports {
	t.Helper()
	ps, err := freeport.Pick(6)
	if err != nil {
		t.Fatal(err)
	}
	return kube.Ports{Etcd: ps[0], EtcdPeer: ps[1], APIServer: ps[2], Scheduler: ps[3], ControllerManager: ps[4], Kwok: ps[5]}
}

func portsString(p kube.Ports) string {
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d", p.Etcd, p.EtcdPeer, p.APIServer, p.Scheduler, p.ControllerManager, p.Kwok)
}

func parsePorts(s string) kube.Ports {
	var p kube.Ports
	fmt.Sscanf(s, "%d,%d,%d,%d,%d,%d", &p.Etcd, &p.EtcdPeer, &p.APIServer, &p.Scheduler, &p.ControllerManager, &p.Kwok)
	return p
}

// testLog sends the cluster's lifecycle lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
