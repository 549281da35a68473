package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// loadConfig loads the AWS SDK configuration shared by the EC2 and SQS
// clients. With a local endpoint it uses static dummy credentials and no
// shared config files (region us-east-1 unless given). Request bodies are
// sent from memory (see bufferedBodies). extra options come first.
func loadConfig(ctx context.Context, region, endpoint string, extra ...func(*config.LoadOptions) error) (aws.Config, error) {
	loads := append([]func(*config.LoadOptions) error{}, extra...)
	if endpoint != "" {
		if region == "" {
			region = "us-east-1"
		}
		loads = append(loads,
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("joinery-local", "joinery-local", "")),
			config.WithSharedConfigFiles([]string{}),
			config.WithSharedCredentialsFiles([]string{}),
		)
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
