//go:build integration

package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/preview/record"
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
	waitFor(t, time.Minute, "10 inflate left", func() bool { n, _ := e.readyPods("app=inflate"); return n == 10 })
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
