package sqs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	cloud "github.com/joinery/joinery/providers/aws"
)

func start(t *testing.T) (*Server, *cloud.Queue, string) {
	t.Helper()
	s := New(Options{})
	base, stop, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	url := s.CreateQueue("interruptions", 2*time.Second)
	q, err := cloud.NewQueue(context.Background(), cloud.QueueOptions{URL: url, Endpoint: base})
	if err != nil {
		t.Fatal(err)
	}
	return s, q, base
}

// The real aws-sdk-go-v2 client (AWS JSON 1.0, MD5 checks on) round-trips
// a message: send, receive, delete.
func TestSDKSendReceiveDelete(t *testing.T) {
	s, q, _ := start(t)
	ctx := context.Background()
	id, err := q.Send(ctx, `{"hello":"world"}`)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Receive(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].ID != id || msgs[0].Body != `{"hello":"world"}` || msgs[0].ReceiveCount != 1 {
		t.Fatalf("received %+v", msgs)
	}
	if v, f := s.Counts("interruptions"); v != 0 || f != 1 {
		t.Fatalf("counts visible=%d inflight=%d, want 0/1", v, f)
	}
	if err := q.Delete(ctx, msgs[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if v, f := s.Counts("interruptions"); v != 0 || f != 0 {
		t.Fatalf("after delete visible=%d inflight=%d", v, f)
	}
	if err := q.Delete(ctx, "nonsense"); err == nil {
		t.Fatal("deleting with an invalid receipt handle succeeded")
	}
}

// A message received and not deleted comes back after the visibility
// timeout with a higher receive count; the old receipt handle no longer deletes.
func TestVisibilityTimeoutRedelivers(t *testing.T) {
	s, q, _ := start(t)
	ctx := context.Background()
	if _, err := q.Send(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	first, err := q.Receive(ctx, 1, 0)
	if err != nil || len(first) != 1 {
		t.Fatalf("%v %v", first, err)
	}
	if again, _ := q.Receive(ctx, 1, 0); len(again) != 0 {
		t.Fatalf("in-flight message received again at once: %+v", again)
	}
	start := time.Now()
	second, err := q.Receive(ctx, 1, 5) // long poll until visible again (2 s)
	if err != nil || len(second) != 1 {
		t.Fatalf("%v %v", second, err)
	}
	if took := time.Since(start); took < time.Second || took > 4*time.Second {
		t.Errorf("redelivered after %s, want about 2 s", took)
	}
	if second[0].ReceiveCount != 2 || second[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Errorf("second receive %+v", second[0])
	}
	if err := q.Delete(ctx, first[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if _, f := s.Counts("interruptions"); f != 1 {
		t.Errorf("an outdated receipt handle deleted the message")
	}
}

// A long poll returns as soon as a message is sent, not at WaitTimeSeconds.
func TestLongPollWakesOnSend(t *testing.T) {
	s, q, _ := start(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = s.Send("interruptions", "late")
	}()
	t0 := time.Now()
	msgs, err := q.Receive(context.Background(), 10, 10)
	if err != nil || len(msgs) != 1 || msgs[0].Body != "late" {
		t.Fatalf("%+v %v", msgs, err)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("long poll took %s", took)
	}
	t0 = time.Now()
	msgs, err = q.Receive(context.Background(), 10, 1)
	if err != nil || len(msgs) != 0 || time.Since(t0) < 900*time.Millisecond {
		t.Fatalf("empty long poll: %+v %v after %s", msgs, err, time.Since(t0))
	}
}

func TestSDKQueueManagementAndErrors(t *testing.T) {
	_, q, _ := start(t)
	ctx := context.Background()
	c := q.SQS()
	out, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("interruptions")})
	if err != nil || aws.ToString(out.QueueUrl) != q.URL() {
		t.Fatalf("GetQueueUrl = %v, %v; want %s", out, err, q.URL())
	}
	_, err = c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var dne *types.QueueDoesNotExist
	if !errors.As(err, &dne) {
		t.Fatalf("GetQueueUrl of a missing queue: %v, want QueueDoesNotExist", err)
	}
	cq, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("other")})
	if err != nil {
		t.Fatal(err)
	}
	lq, err := c.ListQueues(ctx, &awssqs.ListQueuesInput{})
	if err != nil || len(lq.QueueUrls) != 2 {
		t.Fatalf("ListQueues = %v, %v", lq, err)
	}
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: cq.QueueUrl, MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: cq.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Fatalf("GetQueueAttributes = %v, %v", attrs, err)
	}
	if _, err := c.PurgeQueue(ctx, &awssqs.PurgeQueueInput{QueueUrl: cq.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL()), MaxNumberOfMessages: 11}); err == nil {
		t.Fatal("MaxNumberOfMessages 11 accepted")
	}
}
