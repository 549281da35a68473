package sqs

import (
	"context"
	"strings"
	"testing"
)

// Recording is off by default; once on, every HTTP request is logged with
// its operation and headers, and in-process calls are not.
func TestRecordsRequests(t *testing.T) {
	s, q, _ := start(t)
	ctx := context.Background()
	if _, err := q.Send(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests(); len(got) != 0 {
		t.Fatalf("recorded %v with recording off", got)
	}
	s.SetRecording(true)
	if _, err := s.Send("interruptions", "in-process"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Receive(ctx, 10, 0)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("receive: %v %v", msgs, err)
	}
	got := s.Requests()
	var ops []string
	for _, r := range got {
		ops = append(ops, r.Operation)
		if !strings.Contains(r.Header.Get("User-Agent"), "aws-sdk-go-v2") {
			t.Errorf("%s: User-Agent %q", r.Operation, r.Header.Get("User-Agent"))
		}
	}
	if strings.Join(ops, ",") != "SendMessage,ReceiveMessage" {
		t.Errorf("recorded %v, want SendMessage, ReceiveMessage", ops)
	}
	got[0].Header.Set("X-Changed", "1")
	if s.Requests()[0].Header.Get("X-Changed") != "" {
		t.Error("Requests returns the server's own headers, not copies")
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 {
		t.Error("ResetRequests kept requests")
	}
}
