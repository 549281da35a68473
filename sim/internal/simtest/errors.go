package simtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// Code is the error code of an API error answer, "" for any other error
// or none.
func Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// WantThrottle fails the test (what: the call) unless err answers code
// with the HTTP status, and message unless it is empty, and the SDK's
// retryer takes it for a throttle.
func WantThrottle(t testing.TB, err error, what, code string, status int, message string) {
	t.Helper()
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || ae.ErrorCode() != code || (message != "" && ae.ErrorMessage() != message) ||
		!errors.As(err, &re) || re.HTTPStatusCode() != status {
		t.Fatalf("%s: %v, want %s", what, err, strings.TrimSpace(fmt.Sprintf("%s (%d) %s", code, status, message)))
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the SDK does not take %v for a throttle", err)
	}
}
