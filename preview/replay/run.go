package replay

import (
	"context"
	"fmt"
	"io"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/record"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// resources maps the replayed kinds to their resources (and whether they
// are namespaced).
var resources = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"Deployment":          {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	"StatefulSet":         {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, true},
	"Job":                 {schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, true},
	"Pod":                 {schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true},
	"PodDisruptionBudget": {schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
	"PriorityClass":       {schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}, false},
}

// Runner replays a recording on a cluster where Joinery runs.
type Runner struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Catalog *catalog.Catalog
	// Speed is recorded seconds per replayed second (10: ten times faster).
	Speed float64
	// Interval is the recorded time between samples.
	Interval time.Duration
	// Warmup bounds the wait, before the clock starts, for the workload
	// the recording started with to run (the recorded cluster had its
	// nodes then): 0 starts the clock at once.
	Warmup time.Duration
	// Log, when set, is told each step.
	Log io.Writer
	// Recreate, when set, makes the replay a --rebalance-only one: it is
	// given the recorded nodes (NodeTimeline) at the times the recorded
	// cluster got them, to buy the same (the controller then runs no
	// provisioning of its own).
	Recreate func(ctx context.Context, nodes []RecordedNode) error
	// Interrupt, when set, is given the recorded spot interruptions
	// (Recorded.Interruptions) when they come, to interrupt a spot node of
	// the replay's in the same way.
	Interrupt func(ctx context.Context, node RecordedNode) error
}

// Run recreates the recording's workload in time, Speed times faster, and
// samples the cluster every Interval of recorded time until the
// recording's end. A step the API server refuses is reported on Log and
// skipped, as a real cluster would have lived on.
func (r Runner) Run(ctx context.Context, rec *record.Recording) ([]Sample, error) {
	if r.Speed <= 0 || r.Interval <= 0 {
		return nil, fmt.Errorf("replay: speed and sample interval must be positive")
	}
	steps := Timeline(rec)
	for _, ns := range Namespaces(steps) {
		_, err := r.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	recorded := RecordedCapacity(rec, r.Catalog)
	length := rec.End.Sub(rec.Start)
	tl := timelines{steps: steps, interruptions: recorded.Interruptions()}
	if r.Recreate != nil {
		tl.nodes = NodeTimeline(rec)
	}
	var c cursor
	now := func(time.Duration) time.Time { return time.Now() }
	if err := r.advance(ctx, tl, &c, 0, now, true); err != nil {
		return nil, err
	}
	if r.Warmup > 0 {
		for ; c.step < len(steps) && steps[c.step].At == 0; c.step++ {
			r.apply(ctx, steps[c.step])
		}
		if err := r.warmUp(ctx, Namespaces(steps), expectedPods(steps)); err != nil {
			return nil, err
		}
	}
	var events eventCounter
	if _, _, err := events.count(ctx, r.Kube); err != nil { // the warm-up's are not the window's
		return nil, err
	}
	start := time.Now()
	wall := func(at time.Duration) time.Time { return start.Add(time.Duration(float64(at) / r.Speed)) }
	var samples []Sample
	for at := time.Duration(0); at <= length; at += r.Interval {
		if err := r.advance(ctx, tl, &c, at, wall, false); err != nil {
			return samples, err
		}
		if err := sleepUntil(ctx, wall(at)); err != nil {
			return samples, err
		}
		s, err := r.sample(ctx, at, Namespaces(steps))
		if err != nil {
			return samples, err
		}
		s.Recorded, s.RecordedPending = recorded.At(at), recorded.PendingAt(at)
		if s.Evicted, s.Interrupted, err = events.count(ctx, r.Kube); err != nil {
			return samples, err
		}
		s.RecordedEvicted, s.RecordedInterrupted = recorded.EvictionsBetween(at-r.Interval, at), recorded.InterruptionsBetween(at-r.Interval, at)
		samples = append(samples, s)
	}
	return samples, nil
}

// timelines are what a replay does in time: the workload's steps, the
// recorded nodes to buy (--rebalance-only) and the recorded spot
// interruptions to inflict.
type timelines struct {
	steps         []Step
	nodes         []NodeStep
	interruptions []Interruption
}

// cursor is how far a replay got through its timelines.
type cursor struct{ step, node, interruption int }

// advance does, in time order and each when its time comes, what the
// timelines hold up to recorded time to: nodes first at a moment (the
// recorded cluster had them), then the workload, then interruptions.
// Before the clock starts (nodesOnly) it buys only the first nodes.
func (r Runner) advance(ctx context.Context, tl timelines, c *cursor, to time.Duration, wall func(time.Duration) time.Time, nodesOnly bool) error {
	for {
		at, kind := to+1, ""
		if c.node < len(tl.nodes) && tl.nodes[c.node].At <= to {
			at, kind = tl.nodes[c.node].At, "node"
		}
		if !nodesOnly && c.step < len(tl.steps) && tl.steps[c.step].At < at && tl.steps[c.step].At <= to {
			at, kind = tl.steps[c.step].At, "step"
		}
		if !nodesOnly && c.interruption < len(tl.interruptions) && tl.interruptions[c.interruption].At < at {
			at, kind = tl.interruptions[c.interruption].At, "interruption"
		}
		if kind == "" {
			return nil
		}
		if err := sleepUntil(ctx, wall(at)); err != nil {
			return err
		}
		switch kind {
		case "node":
			var batch []RecordedNode
			for ; c.node < len(tl.nodes) && tl.nodes[c.node].At == at; c.node++ {
				batch = append(batch, tl.nodes[c.node].Node)
			}
			if err := r.Recreate(ctx, batch); err != nil {
				return fmt.Errorf("recreate %d recorded nodes at %s: %w", len(batch), at, err)
			}
		case "step":
			r.apply(ctx, tl.steps[c.step])
			c.step++
		case "interruption":
			r.interrupt(ctx, tl.interruptions[c.interruption])
			c.interruption++
		}
	}
}

// interrupt inflicts a recorded spot interruption on the replay, when it
// can (Interrupt set); a replay with no spot node to interrupt lives on.
func (r Runner) interrupt(ctx context.Context, in Interruption) {
	if r.Interrupt == nil {
		return
	}
	if err := r.Interrupt(ctx, in.Node); err != nil && r.Log != nil {
		fmt.Fprintf(r.Log, "replay %s: the recorded spot interruption of a %s not replayed: %v\n", in.At, in.Node.InstanceType, err)
	}
}

func (r Runner) apply(ctx context.Context, s Step) {
	res := resources[s.Object.GetKind()]
	ri := dynamic.ResourceInterface(r.Dynamic.Resource(res.gvr))
	if res.namespaced {
		ri = r.Dynamic.Resource(res.gvr).Namespace(s.Object.GetNamespace())
	}
	var err error
	if s.Delete {
		err = ri.Delete(ctx, s.Object.GetName(), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			err = nil
		}
	} else {
		var data []byte
		if data, err = s.Object.MarshalJSON(); err == nil {
			force := true
			_, err = ri.Patch(ctx, s.Object.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "joinery-replay", Force: &force})
		}
	}
	if r.Log != nil {
		verb := map[bool]string{true: "delete", false: "apply"}[s.Delete]
		if err != nil {
			fmt.Fprintf(r.Log, "replay %s: %s %s %s/%s refused: %v\n", s.At, verb, s.Object.GetKind(), s.Object.GetNamespace(), s.Object.GetName(), err)
		}
	}
}

// sample reads the Joinery nodes (priced as the recorded ones) and the
// replayed workload's pods not yet on a node.
func (r Runner) sample(ctx context.Context, at time.Duration, namespaces []string) (Sample, error) {
	s := Sample{At: at}
	nodes, err := r.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool})
	if err != nil {
		return s, err
	}
	for _, n := range nodes.Items {
		s.Replayed.Nodes++
		s.Replayed.USDPerHour += NodePrice(r.Catalog, n.Labels)
	}
	for _, ns := range namespaces {
		pods, err := r.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return s, err
		}
		for _, p := range pods.Items {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending:
				s.Pending++
			case p.Status.Phase == corev1.PodRunning:
				s.Running++
			}
		}
	}
	return s, nil
}

// warmUp waits, up to Warmup, until the want pods the recording started
// with run.
func (r Runner) warmUp(ctx context.Context, namespaces []string, want int) error {
	deadline := time.Now().Add(r.Warmup)
	for {
		s, err := r.sample(ctx, 0, namespaces)
		if err != nil {
			return err
		}
		if s.Pending == 0 && s.Running >= want {
			return nil
		}
		if time.Now().After(deadline) {
			if r.Log != nil {
				fmt.Fprintf(r.Log, "replay: %d pods still pending after the %s warm-up; the clock starts anyway\n", s.Pending, r.Warmup)
			}
			return nil
		}
		if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
			return err
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// expectedPods is how many pods the workload at the start makes: each
// Deployment's and StatefulSet's replicas, each Job's parallelism, each
// bare pod.
func expectedPods(steps []Step) int {
	n := 0
	for _, s := range steps {
		if s.At > 0 || s.Delete {
			break
		}
		switch s.Object.GetKind() {
		case "Deployment", "StatefulSet":
			n += countAt(s.Object.Object, "spec", "replicas")
		case "Job":
			n += countAt(s.Object.Object, "spec", "parallelism")
		case "Pod":
			n++
		}
	}
	return n
}

// countAt is the count at path (1 when unset), whether it came from YAML
// (int64) or a recording's JSON (float64).
func countAt(obj map[string]any, path ...string) int {
	v, found, _ := unstructured.NestedFieldNoCopy(obj, path...)
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	if found {
		return 0
	}
	return 1
}
