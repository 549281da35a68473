package sqs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzServeHTTP: any X-Amz-Target and JSON body get an SQS JSON answer (a
// result or an error with a __type and a message), never a panic or a 500.
// Long polls are cut short by the request context.
//
//	go test -run '^$' -fuzz FuzzServeHTTP -fuzztime 10m ./sim/sqs/
func FuzzServeHTTP(f *testing.F) {
	for _, c := range [][2]string{
		{"CreateQueue", `{"QueueName":"q","Attributes":{"VisibilityTimeout":"30"}}`},
		{"GetQueueUrl", `{"QueueName":"joinery-interruption"}`},
		{"ListQueues", `{"QueueNamePrefix":"j","MaxResults":1}`},
		{"SendMessage", `{"QueueUrl":"http://x/123/joinery-interruption","MessageBody":"{}","DelaySeconds":0}`},
		{"ReceiveMessage", `{"QueueUrl":"http://x/123/joinery-interruption","MaxNumberOfMessages":10,"WaitTimeSeconds":1,"VisibilityTimeout":0,"MessageSystemAttributeNames":["All"]}`},
		{"DeleteMessage", `{"QueueUrl":"http://x/123/joinery-interruption","ReceiptHandle":"abc"}`},
		{"GetQueueAttributes", `{"QueueUrl":"http://x/123/joinery-interruption","AttributeNames":["All"]}`},
		{"PurgeQueue", `{"QueueUrl":"/joinery-interruption"}`},
		{"Nope", `{}`},
		{"SendMessage", `{"QueueUrl":5}`},
		{"ReceiveMessage", `{"QueueUrl":"q","MaxNumberOfMessages":1e99}`},
		{"", `[`},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, op, body string) {
		s := New(Options{Region: "us-east-1"})
		s.CreateQueue("joinery-interruption", 0)
		_, _ = s.Send("joinery-interruption", `{"id":"1"}`)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("X-Amz-Target", "AmazonSQS."+op)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("500 for %s %q: %s", op, body, rec.Body.String())
		}
		var out map[string]interface{}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("status %d, body is not JSON (%v): %q", rec.Code, err, rec.Body.String())
		}
		if rec.Code != http.StatusOK {
			if typ, _ := out["__type"].(string); typ == "" {
				t.Fatalf("status %d without __type: %s", rec.Code, rec.Body.String())
			}
			if msg, _ := out["message"].(string); msg == "" {
				t.Fatalf("status %d without a message: %s", rec.Code, rec.Body.String())
			}
		}
	})
}
