package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// QueueOptions configures NewQueue.
type QueueOptions struct {
	// URL is the queue URL, e.g.
	// https://sqs.us-east-1.amazonaws.com/111122223333/my-cluster. Required.
	URL string
	// Region is the AWS region; empty takes it from the environment, or
	// "us-east-1" when Endpoint is set.
	Region string
	// Endpoint is the SQS BaseEndpoint (empty: real AWS). When set, shared
	// config files are not read.
	Endpoint string
	// Key, when set, signs every call; otherwise the SDK's default
	// credential chain does (Options.Key).
	Key StaticKey
	// Observe, when set, is told of every SQS call (for metrics).
	Observe ObserveFunc
	// Throttled, when set, is told of every throttled attempt.
	Throttled ThrottleFunc
}

// Queue is the interruption queue: aws-sdk-go-v2 SQS (AWS JSON protocol).
type Queue struct {
	sqs *sqs.Client
	url string
}

// QueueMessage is one received message.
type QueueMessage struct {
	ID            string
	ReceiptHandle string
	Body          string
	// ReceiveCount is how often the message was received (1 the first time).
	ReceiveCount int
}

// NewQueue builds a Queue client.
func NewQueue(ctx context.Context, o QueueOptions) (*Queue, error) {
	if o.URL == "" {
		return nil, errors.New("cloud: queue URL is required")
	}
	cfg, err := loadConfig(ctx, o.Region, o.Endpoint, o.Key,
		config.WithRetryer(func() aws.Retryer { return newAdaptiveRetryer(DefaultMaxAttempts, 0) }))
	if err != nil {
		return nil, err
	}
	client := sqs.NewFromConfig(cfg, func(so *sqs.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.APIOptions = append(so.APIOptions, observers(o.Observe, o.Throttled)...)
	})
	return &Queue{sqs: client, url: o.URL}, nil
}

// URL is the queue's URL.
func (q *Queue) URL() string { return q.url }

// SQS returns the underlying SDK client.
func (q *Queue) SQS() *sqs.Client { return q.sqs }

// Receive long-polls for up to max messages (1..10), waiting up to
// waitSeconds (0..20) for the first one.
func (q *Queue) Receive(ctx context.Context, max, waitSeconds int32) ([]QueueMessage, error) {
	out, err := q.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.url), MaxNumberOfMessages: max, WaitTimeSeconds: waitSeconds,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil {
		return nil, fmt.Errorf("sqs receive from %s: %w", q.url, err)
	}
	msgs := make([]QueueMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		qm := QueueMessage{ID: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body)}
		if v, ok := m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)]; ok {
			_, _ = fmt.Sscan(v, &qm.ReceiveCount)
		}
		msgs = append(msgs, qm)
	}
	return msgs, nil
}

// Delete deletes a received message.
func (q *Queue) Delete(ctx context.Context, receiptHandle string) error {
	_, err := q.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(receiptHandle)})
	if err != nil {
		return fmt.Errorf("sqs delete from %s: %w", q.url, err)
	}
	return nil
}

// Send sends a message (tests and the local world's simulator).
func (q *Queue) Send(ctx context.Context, body string) (string, error) {
	out, err := q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(body)})
	if err != nil {
		return "", fmt.Errorf("sqs send to %s: %w", q.url, err)
	}
	return aws.ToString(out.MessageId), nil
}
