package world

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/sim/ec2"
)

// A world with only the EC2 and SQS endpoints and the admin endpoint, and
// one running spot instance.
func interruptionWorld(t *testing.T) (*World, *aws.Queue, string) {
	t.Helper()
	const id = "i-0123456789abcdef0"
	state := filepath.Join(t.TempDir(), "ec2.json")
	saved := `{"seq":1,"instances":[{"ID":"` + id + `","InstanceType":"m5.large","Zone":"us-east-1a","CapacityType":"spot",
		"State":"running","Architecture":"x86_64","Tags":{},"seq":1}]}`
	if err := os.WriteFile(state, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &World{EC2: ec2.New(ec2.Options{TerminateDelay: 50 * time.Millisecond})}
	if err := w.EC2.LoadState(state); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.EC2.Close)
	if err := w.startInterruptions(Options{AdminAddr: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.stopInterruptions)
	q, err := aws.NewQueue(context.Background(), aws.QueueOptions{URL: w.InterruptionQueueURL, Endpoint: w.SQSEndpoint, Key: w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	return w, q, id
}

// What `starter simulate interruption` posts.
func post(t *testing.T, w *World, req map[string]string) (SimulateResult, int) {
	t.Helper()
	b, _ := json.Marshal(req)
	resp, err := http.Post("http://"+w.AdminAddr+"/simulate/interruption", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res SimulateResult
	_ = json.NewDecoder(resp.Body).Decode(&res)
	return res, resp.StatusCode
}

func receiveOne(t *testing.T, q *aws.Queue, wait int32) interruption.Message {
	t.Helper()
	msgs, err := q.Receive(context.Background(), 10, wait)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("received %+v, %v; want one message", msgs, err)
	}
	_ = q.Delete(context.Background(), msgs[0].ReceiptHandle)
	m, err := interruption.Parse([]byte(msgs[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A spot warning with a shortened notice: the event's time + 2 minutes is
// the reclaim, the instance goes at the reclaim and a state-change event follows.
func TestSimulateSpotInterruptionThroughTheAdminEndpoint(t *testing.T) {
	w, q, id := interruptionWorld(t)
	const notice = 400 * time.Millisecond
	res, code := post(t, w, map[string]string{"instanceId": id, "kind": "spot", "notice": notice.String()})
	if code != http.StatusOK || res.InstanceID != id || res.EventID == "" || res.ReclaimAt.IsZero() {
		t.Fatalf("%d %+v", code, res)
	}
	m := receiveOne(t, q, 0)
	if m.Kind != interruption.KindSpotInterrupted || m.InstanceIDs[0] != id || m.EventID != res.EventID {
		t.Fatalf("message %+v", m)
	}
	// The event's time has whole seconds (RFC 3339), and a loaded machine adds some delay.
	if d := m.NoticeEnd.Sub(res.ReclaimAt); d < -2*time.Second || d > time.Second {
		t.Errorf("the warning says the instance goes at %s, the reclaim is at %s", m.NoticeEnd, res.ReclaimAt)
	}
	if in, _ := w.EC2.Instance(id); in.State != ec2.StateRunning {
		t.Fatalf("instance %s before the notice ended", in.State)
	}
	sc := receiveOne(t, q, 5) // the reclaim's state change
	if sc.Kind != interruption.KindInstanceTerminated || sc.State != "shutting-down" || sc.InstanceIDs[0] != id {
		t.Errorf("state change %+v", sc)
	}
	if time.Now().Before(res.ReclaimAt) {
		t.Errorf("state change before the reclaim time")
	}
	if in, _ := w.EC2.Instance(id); in.State != ec2.StateShuttingDown && in.State != ec2.StateTerminated {
		t.Errorf("instance %s after the reclaim", in.State)
	}
	if _, code := post(t, w, map[string]string{"instanceId": id, "kind": "spot"}); code != http.StatusBadRequest {
		t.Errorf("interrupting a reclaimed instance answered %d", code)
	}
}

func TestSimulateOtherKinds(t *testing.T) {
	w, q, id := interruptionWorld(t)
	// A rebalance recommendation reclaims nothing.
	res, code := post(t, w, map[string]string{"instanceId": id, "kind": "rebalance"})
	if code != http.StatusOK || !res.ReclaimAt.IsZero() {
		t.Fatalf("%d %+v", code, res)
	}
	if m := receiveOne(t, q, 0); m.Kind != interruption.KindRebalanceRecommendation {
		t.Errorf("rebalance sent %+v", m)
	}
	res, code = post(t, w, map[string]string{"instanceId": id, "kind": "health", "notice": "1h"})
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	m := receiveOne(t, q, 0)
	if m.Kind != interruption.KindScheduledChange || m.NoticeEnd.Sub(res.ReclaimAt).Abs() > time.Second {
		t.Errorf("health sent %+v, reclaim %s", m, res.ReclaimAt)
	}
	if _, code := post(t, w, map[string]string{"instanceId": id, "kind": "meteor"}); code != http.StatusBadRequest {
		t.Errorf("unknown kind answered %d", code)
	}
	if _, code := post(t, w, map[string]string{"instanceId": "i-0000000000000000f"}); code != http.StatusBadRequest {
		t.Errorf("unknown instance answered %d", code)
	}
}
