package sqs

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/simtest"
)

func TestAuthorizationAsSQSAnswers(t *testing.T) {
	worker := simtest.Worker(`{"Version":"2012-10-17","Statement":{"Effect":"Allow",
		"Action":["sqs:ReceiveMessage","sqs:DeleteMessage"],"Resource":"arn:aws:sqs:us-east-1:123456789012:interruptions"}}`)
	s := New(Options{Guard: awsauth.NewGuard(worker)})
	base := simtest.Serve(t, s)
	mine, theirs := s.CreateQueue("interruptions", 0), s.CreateQueue("other", 0)
	client := func(id awsauth.Identity) *awssqs.Client {
		return simtest.Client(awssqs.NewFromConfig, base, id.CredentialsProvider())
	}
	ctx := context.Background()
	receive := func(c *awssqs.Client, url string) error {
		_, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
		return err
	}
	if err := receive(client(worker), mine); err != nil {
		t.Errorf("its queue: %v", err)
	}
	if err := receive(client(worker), theirs); simtest.Code(err) != "AccessDenied" ||
		!strings.Contains(err.Error(), "sqs:ReceiveMessage on resource: arn:aws:sqs:us-east-1:123456789012:other") {
		t.Errorf("another queue: %v", err)
	}
	if _, err := client(worker).SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(mine), MessageBody: aws.String("x")}); simtest.Code(err) != "AccessDenied" {
		t.Errorf("SendMessage, not granted: %v", err)
	}
	if err := receive(client(simtest.Stranger(worker)), mine); simtest.Code(err) != "InvalidClientTokenId" {
		t.Errorf("unknown key: %v", err)
	}
}
