package ssm_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkssm "github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joinery/joinery/sim/internal/simtest"
	"github.com/joinery/joinery/sim/ssm"
)

// Past Parameter Store's throughput (scaled to 2 a second here) a read
// answers ThrottlingException, HTTP 400, which the SDK retries as a
// throttle.
func TestThrottlingException(t *testing.T) {
	srv := ssm.New(ssm.Options{ThrottleScale: 0.05})
	srv.Put("/p", "v")
	c := simtest.Client(sdkssm.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String("/p")}); err != nil {
			t.Fatalf("read %d within the throughput: %v", i+1, err)
		}
	}
	_, err := c.GetParameters(ctx, &sdkssm.GetParametersInput{Names: []string{"/p"}})
	simtest.WantThrottle(t, err, "third read in the second", "ThrottlingException", http.StatusBadRequest, "Rate exceeded")
}
