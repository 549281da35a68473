package ssm_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkssm "github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joinery/joinery/sim/internal/simtest"
	"github.com/joinery/joinery/sim/ssm"
)

func TestGetParameterAndGetParameters(t *testing.T) {
	mod := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	srv := ssm.New(ssm.Options{Source: func(name string) (string, int64, time.Time, bool) {
		if name == "/aws/service/x/image_id" {
			return "ami-0123", 3, mod, true
		}
		return "", 0, time.Time{}, false
	}})
	srv.Put("/mine", "v1")
	srv.SetRecording(true)
	c := simtest.Client(sdkssm.NewFromConfig, simtest.Serve(t, srv), simtest.AnyKey)
	ctx := context.Background()
	out, err := c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String("/aws/service/x/image_id")})
	if err != nil || aws.ToString(out.Parameter.Value) != "ami-0123" || out.Parameter.Version != 3 || !out.Parameter.LastModifiedDate.Equal(mod) {
		t.Fatalf("%+v, %v", out, err)
	}
	_, err = c.GetParameter(ctx, &sdkssm.GetParameterInput{Name: aws.String("/nope")})
	if simtest.Code(err) != "ParameterNotFound" {
		t.Errorf("missing: %v", err)
	}
	many, err := c.GetParameters(ctx, &sdkssm.GetParametersInput{Names: []string{"/mine", "/nope", "/aws/service/x/image_id"}})
	if err != nil || len(many.Parameters) != 2 || len(many.InvalidParameters) != 1 || many.InvalidParameters[0] != "/nope" {
		t.Errorf("GetParameters: %+v, %v", many, err)
	}
	if r := srv.Requests(); len(r) != 3 || r[0].Operation != "GetParameter" || r[2].Operation != "GetParameters" {
		t.Errorf("recorded %+v", r)
	}
}
