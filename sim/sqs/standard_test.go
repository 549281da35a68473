package sqs

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	cloud "github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func startWith(t *testing.T, o Options) (*Server, *cloud.Queue) {
	t.Helper()
	s := New(o)
	base, stop, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	q, err := cloud.NewQueue(context.Background(), cloud.QueueOptions{URL: s.CreateQueue("q", 30*time.Second), Endpoint: base})
	if err != nil {
		t.Fatal(err)
	}
	return s, q
}

// A duplicate copy comes back with the same message id after the first
// copy was received and deleted.
func TestDuplicateDeliveredAfterDelete(t *testing.T) {
	_, q := startWith(t, Options{DuplicateFraction: 1})
	ctx := context.Background()
	id, err := q.Send(ctx, "event")
	if err != nil {
		t.Fatal(err)
	}
	first, err := q.Receive(ctx, 1, 0)
	if err != nil || len(first) != 1 || first[0].ID != id {
		t.Fatalf("first receive: %+v %v", first, err)
	}
	if err := q.Delete(ctx, first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	again, err := q.Receive(ctx, 10, 3)
	if err != nil || len(again) != 1 || again[0].ID != id || again[0].Body != "event" || again[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Fatalf("after deleting the first copy: %+v %v, want the same message once more with its own receipt handle", again, err)
	}
}

// With Reorder a receive does not hand messages out in send order.
func TestReorderedReceive(t *testing.T) {
	_, q := startWith(t, Options{Reorder: true, Seed: 7})
	ctx := context.Background()
	var sent []string
	for range 10 {
		id, err := q.Send(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, id)
	}
	msgs, err := q.Receive(ctx, 10, 0)
	if err != nil || len(msgs) != 10 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.ID)
	}
	if slices.Equal(got, sent) {
		t.Fatal("ten messages came back in send order")
	}
	slices.Sort(got)
	slices.Sort(sent)
	if !slices.Equal(got, sent) {
		t.Fatalf("received %v, sent %v", got, sent)
	}
}

// Past an action's bucket (scaled to one call here) SQS answers
// RequestThrottled, HTTP 403, which the SDK takes for a throttle.
func TestRequestThrottled(t *testing.T) {
	_, q := startWith(t, Options{ThrottleScale: 0.0004})
	ctx := context.Background()
	send := func(body string) error {
		_, err := q.SQS().SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(q.URL()), MessageBody: aws.String(body)},
			func(o *awssqs.Options) { o.Retryer = aws.NopRetryer{} })
		return err
	}
	if err := send("a"); err != nil {
		t.Fatal(err)
	}
	simtest.WantThrottle(t, send("b"), "second send in the second", "RequestThrottled", http.StatusForbidden, "")
}
