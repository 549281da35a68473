package aws

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"k8s.io/utils/clock"
)

// DefaultMaxAttempts is the number of attempts per EC2 call (the first one
// included) when Options.MaxAttempts is 0.
const DefaultMaxAttempts = 5

// Options configures New.
type Options struct {
	// Region is the AWS region; empty takes it from the environment
	// (AWS_REGION, shared config), or "us-east-1" when Endpoint is set.
	Region string
	// Endpoint is the EC2 BaseEndpoint, e.g. "http://127.0.0.1:4566" for
	// the local endpoint; empty means real AWS. When set, shared config
	// files are not read (see Key).
	Endpoint string
	// Key, when set, signs every call; otherwise the SDK's default
	// credential chain does (the environment first), as in a pod.
	Key StaticKey
	// ClusterName is written to every launched instance as the
	// joinery.sh/cluster tag and scopes List. Required.
	ClusterName string
	// MaxAttempts is how many times the SDK's adaptive retryer tries a call
	// that fails with a retryable error (throttling such as
	// RequestLimitExceeded, 5xx, transport errors), first attempt included
	// (default DefaultMaxAttempts). Every client retries in the SDK's
	// adaptive mode, one send rate per operation (retry.go).
	MaxAttempts int
	// MaxBackoff caps the retryer's exponential backoff with jitter between
	// attempts (default the SDK's 20s; tests use milliseconds).
	MaxBackoff time.Duration
	// ICECache, when set, receives every offering CreateFleet reports as
	// unfulfillable, on success (partial failures) as on failure.
	ICECache *ICECache
	// Observe, when set, is told of every EC2, SSM, IAM and EKS call (for
	// metrics).
	Observe ObserveFunc
	// Throttled, when set, is told of every attempt AWS refused for its
	// rate, retried ones included (for a metric and a log).
	Throttled ThrottleFunc
	// SSMEndpoint, IAMEndpoint and EKSEndpoint are the BaseEndpoints of
	// those services (the local world's loopback servers); empty means real
	// AWS. Each one set reads no shared config files, as Endpoint does.
	SSMEndpoint, IAMEndpoint, EKSEndpoint string
	// PricingEndpoint is the Price List API's BaseEndpoint (the local
	// world's); empty means real AWS, in PricingRegion(Region) whatever
	// the cluster's region.
	PricingEndpoint string
	// ConsistencyWindow is how long EC2 may take to show what Joinery
	// wrote (default DefaultConsistencyWindow): until then an instance
	// launched that EC2 says it does not know is not taken as gone.
	ConsistencyWindow time.Duration
	// LaunchBatchIdle is how long a launch waits for identical ones to
	// join its CreateFleet (default DefaultLaunchBatchIdle; a batch goes
	// after a second at most). Negative: every launch is a call of its own.
	LaunchBatchIdle time.Duration
	// Clock times the waits of eventual consistency (default the real
	// clock; tests pass a fake one).
	Clock clock.Clock
}

// Client is the EC2 adapter, with the SSM, IAM and EKS calls the launch
// path needs. It is safe for concurrent use.
type Client struct {
	ec2     *ec2.Client
	ssm     *ssm.Client
	iam     *iam.Client
	eks     *eks.Client
	pricing *pricing.Client
	region  string // the cluster's region (prices are read for it)
	opts    Options
	// describes and terminations batch the per-instance calls of Get and
	// Terminate.
	describes    *batcher[Instance]
	terminations *batcher[string]
	// fleets batches Launch's CreateFleet calls (nil: one call each).
	fleets *fleetBatcher
}

// New builds a Client with an *ec2.Client from aws-sdk-go-v2/config.
func New(ctx context.Context, o Options) (*Client, error) {
	if o.ClusterName == "" {
		return nil, errors.New("cloud: ClusterName is required")
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.ConsistencyWindow <= 0 {
		o.ConsistencyWindow = DefaultConsistencyWindow
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	// Each client gets its own retryer (the SDK calls this once per client).
	retryer := config.WithRetryer(func() aws.Retryer { return newAdaptiveRetryer(o.MaxAttempts, o.MaxBackoff) })
	cfg, err := loadConfig(ctx, o.Region, o.Endpoint, o.Key, retryer)
	if err != nil {
		return nil, err
	}
	apiOptions := observers(o.Observe, o.Throttled)
	client := ec2.NewFromConfig(cfg, func(eo *ec2.Options) {
		if o.Endpoint != "" {
			eo.BaseEndpoint = aws.String(o.Endpoint)
		}
		eo.APIOptions = append(eo.APIOptions, apiOptions...)
	})
	c := &Client{ec2: client, opts: o}
	c.newInstanceBatchers()
	if o.LaunchBatchIdle >= 0 {
		c.fleets = newFleetBatcher(c, cmp.Or(o.LaunchBatchIdle, DefaultLaunchBatchIdle))
	}
	// The other services load their own configuration: each may be local
	// (dummy credentials) while another is real AWS.
	region := cfg.Region
	if cfg, err = loadConfig(ctx, region, o.SSMEndpoint, o.Key, retryer); err != nil {
		return nil, err
	}
	c.ssm = ssm.NewFromConfig(cfg, func(so *ssm.Options) {
		if o.SSMEndpoint != "" {
			so.BaseEndpoint = aws.String(o.SSMEndpoint)
		}
		so.APIOptions = append(so.APIOptions, apiOptions...)
	})
	if cfg, err = loadConfig(ctx, region, o.IAMEndpoint, o.Key, retryer); err != nil {
		return nil, err
	}
	c.iam = iam.NewFromConfig(cfg, func(io *iam.Options) {
		if o.IAMEndpoint != "" {
			io.BaseEndpoint = aws.String(o.IAMEndpoint)
		}
		io.APIOptions = append(io.APIOptions, apiOptions...)
	})
	if cfg, err = loadConfig(ctx, region, o.EKSEndpoint, o.Key, retryer); err != nil {
		return nil, err
	}
	c.eks = eks.NewFromConfig(cfg, func(eo *eks.Options) {
		if o.EKSEndpoint != "" {
			eo.BaseEndpoint = aws.String(o.EKSEndpoint)
		}
		eo.APIOptions = append(eo.APIOptions, apiOptions...)
	})
	c.region = region
	if o.Endpoint != "" && o.PricingEndpoint == "" {
		// A local EC2 endpoint without a local Pricing one: never reach
		// out to AWS for prices (OnDemandPrices fails; the embedded
		// prices stay in use).
		return c, nil
	}
	if cfg, err = loadConfig(ctx, PricingRegion(region), o.PricingEndpoint, o.Key, retryer); err != nil {
		return nil, err
	}
	c.pricing = pricing.NewFromConfig(cfg, func(po *pricing.Options) {
		if o.PricingEndpoint != "" {
			po.BaseEndpoint = aws.String(o.PricingEndpoint)
		}
		po.APIOptions = append(po.APIOptions, apiOptions...)
	})
	return c, nil
}

// EC2 returns the underlying SDK client, for calls the adapter does not wrap.
func (c *Client) EC2() *ec2.Client { return c.ec2 }

// ClusterName returns the cluster the client tags and lists instances for.
func (c *Client) ClusterName() string { return c.opts.ClusterName }

// bufferedBodies sends each request body from memory (EC2 Query bodies are
// small forms). The SDK closes a request body as soon as the response
// headers arrive; when a server answers before net/http has finished its
// end-of-body check on the SDK's stream, net/http closes the connection
// under the response being read ("use of closed network connection",
// aws-sdk-go-v2 issues #1825 and #2737). Against the local endpoint that
// hit about one large response in five; from memory the race cannot occur.
type bufferedBodies struct{ next aws.HTTPClient }

func (b bufferedBodies) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return b.next.Do(req)
	}
	data, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("buffer request body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	req.ContentLength = int64(len(data))
	return b.next.Do(req)
}

// Restarted is a new Client with c's options and none of its memory (the
// batches it launched, its pending lookups): what a worker that died and
// started again has.
func (c *Client) Restarted(ctx context.Context) (*Client, error) {
	return New(ctx, c.opts)
}
