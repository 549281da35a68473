package aws

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// StaticKey is an access key pair. The local world hands the worker one,
// as a pod gets AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: its endpoints
// authenticate every call and evaluate the key's IAM policy.
type StaticKey struct{ AccessKeyID, SecretAccessKey string }

// unsignedKey is used against a local endpoint when no key is given and
// the environment has none: a local world refuses it (AuthFailure); the
// unit tests' endpoints, which authenticate nothing, accept it.
var unsignedKey = StaticKey{"joinery-no-credentials", "joinery-no-credentials"}

// loadConfig loads the AWS SDK configuration of one service client.
// Credentials: key when set; otherwise the SDK's default chain
// (environment, web identity, container, instance metadata), except that
// with a local endpoint the shared config files are not read and, with no
// AWS_ACCESS_KEY_ID in the environment, unsignedKey is sent (region
// us-east-1 unless given). Request bodies are sent from memory (see
// bufferedBodies). extra options come first.
func loadConfig(ctx context.Context, region, endpoint string, key StaticKey, extra ...func(*config.LoadOptions) error) (aws.Config, error) {
	loads := append([]func(*config.LoadOptions) error{}, extra...)
	if endpoint != "" {
		if region == "" {
			region = "us-east-1"
		}
		if key.AccessKeyID == "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			key = unsignedKey
		}
		loads = append(loads, config.WithSharedConfigFiles([]string{}), config.WithSharedCredentialsFiles([]string{}))
	}
	if key.AccessKeyID != "" {
		loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(key.AccessKeyID, key.SecretAccessKey, "")))
	}
	if region != "" {
		loads = append(loads, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("cloud: load AWS config: %w", err)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awshttp.NewBuildableClient()
	}
	// Wrapped after loading: a custom client passed to LoadDefaultConfig
	// breaks AWS_CA_BUNDLE handling.
	cfg.HTTPClient = bufferedBodies{cfg.HTTPClient}
	return cfg, nil
}
