//go:build integration

package integration

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/preview/record"
	"github.com/joinery/joinery/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// starter record on the local world: the objects at the start, then the
// scale-up's pods and nodes and the scale-down as changes with their
// times; a kind the cluster does not serve is named as skipped; the
// anonymized file shows no name, namespace or label value of the source.
func TestRecordTheLocalWorld(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true)
	applyInflate(t, e, "5s", "100%")
	waitFor(t, 3*time.Minute, "inflate Running", func() bool {
		n, _ := e.readyPods("app=inflate")
		return n == 50
	})
	kinds := append(append([]record.Kind(nil), record.Kinds...),
		record.Kind{Name: "Widget", Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan *record.Recording)
	go func() { done <- record.Record(ctx, dynamicClient(t, e), record.Options{Kinds: kinds}) }()
	time.Sleep(2 * time.Second) // the lists are done
	scale := func(n string) {
		if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "inflate", types.MergePatchType, []byte(`{"spec":{"replicas":`+n+`}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	scale("60")
	waitFor(t, 3*time.Minute, "60 inflate Running", func() bool { n, _ := e.readyPods("app=inflate"); return n == 60 })
	scale("10")
	waitFor(t, time.Minute, "10 inflate pods left", func() bool {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=inflate"})
		return err == nil && len(pods.Items) == 10
	})
	time.Sleep(time.Second) // the watch's last deletions
	cancel()
	rec := <-done

	count := func(kind, typ string) int {
		n := 0
		for _, ev := range rec.Events {
			if ev.Kind == kind && ev.Type == typ {
				n++
			}
		}
		return n
	}
	objects := map[string]int{}
	for _, o := range rec.Objects {
		objects[o.Kind]++
	}
	t.Logf("objects %v; pods +%d -%d, nodes +%d, deployment changes %d; skipped %+v", objects,
		count("Pod", "ADDED"), count("Pod", "DELETED"), count("Node", "ADDED"), count("Deployment", "MODIFIED"), rec.Skipped)
	if objects["Pod"] < 50 || objects["NodePool"] != 1 || objects["EC2NodeClass"] != 1 || objects["Node"] == 0 || objects["Deployment"] == 0 {
		t.Errorf("objects at the start: %v", objects)
	}
	if count("Pod", "ADDED") < 10 || count("Pod", "DELETED") < 50 || count("Deployment", "MODIFIED") < 2 {
		t.Error("the scale-up and scale-down are not in the changes")
	}
	if len(rec.Skipped) != 1 || rec.Skipped[0].Kind != "Widget" || !strings.Contains(rec.Skipped[0].Reason, "not served") {
		t.Errorf("skipped %+v, want the Widget kind as not served", rec.Skipped)
	}
	for i := 1; i < len(rec.Events); i++ {
		if rec.Events[i].At.Before(rec.Events[i-1].At) {
			t.Fatal("changes out of time order")
		}
	}

	record.Anonymize(rec, "test")
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{`"inflate"`, `"default"`, `"general-purpose"`, ".ec2.internal", `"kube-system"`} {
		if strings.Contains(buf.String(), name) {
			t.Errorf("the anonymized recording shows %s", name)
		}
	}
}

// TestWriteReplayFixture records the local world for 6 min 40 s from
// empty (the test world lives 8 minutes): inflate scaled 10 -> 40 -> 20 ->
// 60 -> 10 with consolidation on, and a spot interruption, into
// replayFixture (anonymized). Run it by
// hand (JOINERY_WRITE_RECORDING=1) when the recording format changes.
func TestWriteReplayFixture(t *testing.T) {
	if os.Getenv("JOINERY_WRITE_RECORDING") != "1" {
		t.Skip("writes " + replayFixture + ": JOINERY_WRITE_RECORDING=1")
	}
	parallel(t)
	e := startEnvWith(t, false)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 5*time.Second, 5*time.Second
		c.InterruptionQueue, c.SQSEndpoint = e.w.InterruptionQueueURL, e.w.SQSEndpoint
	})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan *record.Recording)
	go func() { done <- record.Record(ctx, dynamicClient(t, e), record.Options{}) }()
	time.Sleep(2 * time.Second)
	start := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	scale := func(n string) {
		if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "inflate", types.MergePatchType, []byte(`{"spec":{"replicas":`+n+`}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applyInflate(t, e, "30s", "100%")
	scale("10")
	at(60 * time.Second)
	scale("40")
	at(150 * time.Second)
	scale("20")
	at(210 * time.Second)
	scale("60")
	at(270 * time.Second)
	nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/capacity-type=spot"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("no spot node to interrupt: %v", err)
	}
	if _, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: nodes.Items[0].Name, Kind: world.SimSpot, Notice: world.DefaultNotice}); err != nil {
		t.Fatal(err)
	}
	at(330 * time.Second)
	scale("10")
	at(400 * time.Second)
	cancel()
	rec := <-done
	record.Anonymize(rec, "fixture")
	if err := record.WriteFile(replayFixture, rec); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d objects, %d changes over %s", len(rec.Objects), len(rec.Events), rec.End.Sub(rec.Start).Round(time.Second))
}
