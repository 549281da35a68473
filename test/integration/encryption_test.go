//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/providers/temporal/codec"
	"github.com/joinery/joinery/test/history"
	"github.com/joinery/joinery/workflows"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testKeyring is published test data: it protects nothing.
const testKeyring = "../../workflows/testdata/encrypted/TEST-ONLY-keyring.json"

// With payload encryption on, a provision and an operator's drain leave
// no pod name, node name or instance id in clear anywhere the Temporal
// server stores: the raw histories (read through a client without the
// codec) and the visibility records (workflow ids, search attributes).
// The codec endpoint decrypts what the Web UI would send it.
func TestEncryptedHistoriesHoldNoIdentifiers(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, true, func(c *controller.Config) { c.Temporal.CodecKeyFile = testKeyring })
	// e.tc has no codec: it sees what the server stores.
	e.apply(t, kept(readManifests(t, "../../examples/nodepools.yaml", "../../examples/workloads.yaml"), poolsClassAndSample))
	ids := map[string]string{} // identifier -> what it is
	collect := func() {
		pods, err := e.kc.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{})
		if err == nil {
			for _, p := range pods.Items {
				ids[p.Name] = "pod"
			}
		}
		nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		if err == nil {
			for _, n := range nodes.Items {
				ids[n.Name] = "node"
				if i := strings.LastIndex(n.Spec.ProviderID, "/"); i >= 0 && strings.HasPrefix(n.Spec.ProviderID[i+1:], "i-") {
					ids[n.Spec.ProviderID[i+1:]] = "instance id"
				}
			}
		}
		for _, nc := range e.nodeClaims(t) {
			u := nc.(*unstructured.Unstructured)
			if n, _, _ := unstructured.NestedString(u.Object, "status", "nodeName"); n != "" {
				ids[n] = "node"
			}
			if p, _, _ := unstructured.NestedString(u.Object, "status", "providerID"); strings.Contains(p, "/i-") {
				ids[p[strings.LastIndex(p, "/")+1:]] = "instance id"
			}
		}
	}
	running := func() (int, map[string]int) { return e.readyPods("app=workload-sample") }
	waitFor(t, 3*time.Minute, "10 workload-sample pods Ready", func() bool { n, _ := running(); return n == 10 })
	collect()

	// An operator's drain, started as `starter drain` does with the codec on.
	conn, err := temporal.Load(temporal.Config{HostPort: e.w.Temporal.Address, CodecKeyFile: testKeyring})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := client.Dial(conn.Options)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	_, byNode := running()
	target := ""
	for n := range byNode {
		if target == "" || n < target {
			target = n
		}
	}
	drainID := workflows.DisruptWorkflowID(saga.ReasonManual, conn.Keyring.Pseudonym(target))
	run, err := sc.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: drainID, TaskQueue: workflows.TaskQueue},
		workflows.DrainAndReplaceWorkflow, workflows.DisruptInput{NodeName: target, Reason: saga.ReasonManual, Replace: true, SkipBudgets: true, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	var res workflows.DisruptResult
	if err := run.Get(dctx, &res); err != nil || res.Outcome != workflows.PhaseDone {
		t.Fatalf("drain of %s: %+v %v", target, res, err)
	}
	waitFor(t, 2*time.Minute, "10 workload-sample pods Ready after the drain", func() bool { n, _ := running(); return n == 10 })
	collect()
	kinds := map[string]int{}
	for _, k := range ids {
		kinds[k]++
	}
	t.Logf("identifiers to look for: %v (drained %s as %s)", kinds, target, drainID)
	if kinds["node"] < 2 || kinds["instance id"] < 2 || kinds["pod"] < 10 {
		t.Fatalf("too few identifiers collected: %v", kinds)
	}

	// Every run of every workflow, as the server stores it.
	var raw [][]byte
	var encrypted []*commonpb.Payload
	var runs []string
	var token []byte
	for {
		l, err := e.tc.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 200, NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(l)
		raw = append(raw, b)
		for _, ex := range l.Executions {
			runs = append(runs, ex.Execution.WorkflowId)
			events, b := rawHistory(t, e, ex.Execution.WorkflowId, ex.Execution.RunId)
			raw = append(raw, b...)
			for _, ev := range events {
				if r := ev.GetActivityTaskCompletedEventAttributes().GetResult(); r != nil {
					encrypted = append(encrypted, r.Payloads...)
				}
			}
		}
		if token = l.NextPageToken; len(token) == 0 {
			break
		}
	}
	sort.Strings(runs)
	t.Logf("%d workflow runs read raw: %s", len(runs), strings.Join(runs, " "))
	kindsSeen := map[string]bool{}
	for _, id := range runs {
		kindsSeen[kindName(id)] = true
	}
	for _, k := range []string{"provision", "nodeclaim", "disrupt", "consolidation"} {
		if !kindsSeen[k] {
			t.Errorf("no %s workflow among the runs read", k)
		}
	}
	all := bytes.Join(raw, nil)
	if n := bytes.Count(all, []byte(codec.EncodingEncrypted)); n < 20 {
		t.Fatalf("only %d encrypted payloads in the raw histories: is the codec on?", n)
	}
	leaks := 0
	for id, what := range ids {
		if bytes.Contains(all, []byte(id)) {
			leaks++
			t.Errorf("%s %q is in clear in the Temporal server's data", what, id)
		}
	}
	if leaks == 0 {
		t.Logf("none of %d identifiers found in %d bytes of raw histories and visibility records", len(ids), len(all))
	}

	// The codec endpoint (what `starter codec-server` serves) decrypts the
	// activity results for the Web UI: they do name the nodes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: codec.NewHTTPHandler(conn.Keyring, codec.DefaultUIOrigins), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: encrypted})
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, "http://"+ln.Addr().String()+"/decode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	req.Header.Set("Origin", "http://127.0.0.1:8233")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var decoded struct {
		Payloads []struct {
			Metadata map[string]string `json:"metadata"`
			Data     string            `json:"data"`
		} `json:"payloads"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&decoded); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("codec endpoint: %d %v", resp.StatusCode, err)
	}
	var clear []byte
	for _, p := range decoded.Payloads {
		d, _ := base64.StdEncoding.DecodeString(p.Data)
		clear = append(clear, d...)
	}
	if len(decoded.Payloads) != len(encrypted) || !bytes.Contains(clear, []byte(target)) {
		t.Errorf("codec endpoint decoded %d of %d payloads; node %s in them: %v", len(decoded.Payloads), len(encrypted), target, bytes.Contains(clear, []byte(target)))
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" {
		t.Errorf("CORS header for the UI origin: %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}

	if os.Getenv("JOINERY_RECORD_HISTORIES") == "1" {
		dir := "../../workflows/testdata/encrypted"
		saved := map[string]bool{}
		for _, id := range runs {
			k := kindName(id)
			if saved[k] || k == "consolidation" { // consolidation keeps running
				continue
			}
			if err := history.Save(e.ctx, e.tc, id, dir, k); err != nil {
				t.Errorf("record %s: %v", id, err)
			}
			saved[k] = true
		}
	}
}

// rawHistory reads a run's history through the plain WorkflowService (no
// data converter involved) and returns its events and their wire bytes.
func rawHistory(t *testing.T, e *env, id, runID string) ([]*historypb.HistoryEvent, [][]byte) {
	t.Helper()
	var events []*historypb.HistoryEvent
	var raw [][]byte
	var token []byte
	for {
		resp, err := e.tc.WorkflowService().GetWorkflowExecutionHistory(e.ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
			NextPageToken: token, HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
		})
		if err != nil {
			if strings.Contains(err.Error(), "not found") { // deleted by retention meanwhile
				return events, raw
			}
			t.Fatalf("history of %s/%s: %v", id, runID, err)
		}
		b, _ := proto.Marshal(resp)
		raw = append(raw, b)
		events = append(events, resp.GetHistory().GetEvents()...)
		if token = resp.NextPageToken; len(token) == 0 {
			return events, raw
		}
	}
}
