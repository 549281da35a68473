package sqs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

func TestAuthorizationAsSQSAnswers(t *testing.T) {
	worker := awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w",
		Policies: []*policy.Policy{policy.MustParse("w", []byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow",
		"Action":["sqs:ReceiveMessage","sqs:DeleteMessage"],"Resource":"arn:aws:sqs:us-east-1:123456789012:interruptions"}}`))}}
	s := New(Options{Guard: awsauth.NewGuard(worker)})
	base, stop, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	mine, theirs := s.CreateQueue("interruptions", 0), s.CreateQueue("other", 0)
	client := func(id awsauth.Identity) *awssqs.Client {
		return awssqs.New(awssqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(base), Retryer: aws.NopRetryer{}, Credentials: id.CredentialsProvider()})
	}
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return ""
	}
	ctx := context.Background()
	receive := func(c *awssqs.Client, url string) error {
		_, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
		return err
	}
	if err := receive(client(worker), mine); err != nil {
		t.Errorf("its queue: %v", err)
	}
	if err := receive(client(worker), theirs); code(err) != "AccessDenied" ||
		!strings.Contains(err.Error(), "sqs:ReceiveMessage on resource: arn:aws:sqs:us-east-1:123456789012:other") {
		t.Errorf("another queue: %v", err)
	}
	if _, err := client(worker).SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(mine), MessageBody: aws.String("x")}); code(err) != "AccessDenied" {
		t.Errorf("SendMessage, not granted: %v", err)
	}
	stranger := worker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	if err := receive(client(stranger), mine); code(err) != "InvalidClientTokenId" {
		t.Errorf("unknown key: %v", err)
	}
}
