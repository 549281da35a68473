package ec2

import (
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/delay"
)

// Options configures a Server. The zero value is usable: every field has a
// default.
type Options struct {
	// Region is the AWS region the endpoint pretends to be (default "us-east-1").
	Region string
	// Zones are the availability zones, one subnet each (default the
	// region's a, b and c: catalog.DefaultZones in us-east-1).
	Zones []string
	// PriceFactor scales the catalog's (us-east-1) prices for spot (default
	// 1): another region runs with its prices times this factor.
	PriceFactor float64
	// ClusterTag is the value of the karpenter.sh/discovery tag on the
	// subnets and the security group (default "joinery-local"); set it to
	// the value a NodeClass's selector terms use, e.g. "production-eks".
	ClusterTag string
	// AccountID is the owner of every resource (default "123456789012").
	AccountID string
	// Catalog supplies instance types and prices (default catalog.MustDefault()).
	Catalog *catalog.Catalog
	// NotOffered names, by zone, the instance families the zone does not
	// sell (DescribeInstanceTypeOfferings leaves them out, CreateFleet
	// answers Unsupported). Nil: NotOfferedIn(Zones) (DefaultNotOffered in
	// us-east-1); an empty map: every
	// type in every zone.
	NotOffered map[string][]string

	// BootDelay is how long an instance stays pending before it is running
	// (default 2s; negative: it is running as soon as CreateFleet returns).
	BootDelay time.Duration
	// TerminateDelay is how long an instance stays shutting-down before it
	// is terminated (default 1s; negative: terminated at once).
	TerminateDelay time.Duration
	// TerminatedRetention is how long terminated instances stay visible to
	// DescribeInstances, as on EC2 (default 1h).
	TerminatedRetention time.Duration
	// Consistency is the read-after-write window of the API (default 0:
	// off, every write visible at once): launched instances, launch
	// templates created over the API and tags written by CreateTags stay
	// unknown to the API for a per-resource delay in [Consistency/2,
	// Consistency] (see consistency.go). The local world turns it on.
	Consistency time.Duration
	// Now is the clock launch times and the consistency window are read by
	// (default time.Now; tests pass a fake clock's). Boot and termination
	// run on real timers.
	Now func() time.Time

	// Seed seeds every random draw: instance ids, addresses, and the ICE and
	// throttle faults (default 1). The same seed and the same sequence of
	// requests give the same answers.
	Seed uint64
	// ICEFraction is the probability, in [0, 1], that a capacity pool
	// (instance type, zone, capacity type) tried by CreateFleet has no
	// capacity for that request. SetICEFraction changes it later.
	ICEFraction float64
	// ThrottleFraction is the probability, in [0, 1], that a request is
	// refused with RequestLimitExceeded (HTTP 503). SetThrottleFraction
	// changes it later.
	ThrottleFraction float64
	// ThrottleScale turns on EC2's token buckets (throttle.go): each API's
	// request bucket and the launch and termination resource buckets, with
	// EC2's documented default burst and refill times this factor (1:
	// AWS's own numbers). A call a bucket cannot serve is refused with
	// RequestLimitExceeded (HTTP 503). 0: no buckets (unit tests).
	ThrottleScale float64
	// VCPUQuota is the account's vCPU quota in every bucket of families,
	// On-Demand and Spot alike (default DefaultVCPUQuota): a launch past
	// it is refused, VcpuLimitExceeded or MaxSpotInstanceCountExceeded.
	// SetVCPUQuota sets one bucket's.
	VCPUQuota int
	// Latency is added to every request before it is handled. SetLatency
	// changes it later.
	Latency time.Duration

	// KubernetesVersion is the minor version the EKS images and their SSM
	// parameters are published for (default DefaultKubernetesVersion).
	KubernetesVersion string
	// InstanceProfile says whether an IAM instance profile exists and its
	// ARN (the local IAM endpoint answers it). CreateFleet refuses a launch
	// template naming a profile it does not know, as EC2 does. Nil: every
	// profile name is taken to exist (unit tests that do not involve IAM).
	InstanceProfile func(name string) (arn string, ok bool)
	// InstanceProfileHasRole says whether EC2 sees a role on a profile
	// InstanceProfile knows; CreateFleet refuses one without ("has no
	// associated IAM Roles"). Nil: every profile has one.
	InstanceProfileHasRole func(name string) bool

	// Guard, when set, authenticates every request (SigV4, a key it knows)
	// and authorizes each action on every resource the call touches or
	// creates against the caller's IAM policy before serving it
	// (sim/awsauth). Nil: every request is served (unit tests).
	Guard *awsauth.Guard
	// InstanceProfileRoles returns the ARNs of the roles an instance
	// profile holds: a launch with the profile passes them (iam:PassRole).
	// Nil: no role is passed.
	InstanceProfileRoles func(name string) []string

	// OnRunning is called, on its own goroutine, when an instance becomes
	// running (the local world registers a Kubernetes Node then).
	OnRunning func(Instance)
	// OnTerminated is called, on its own goroutine, when an instance
	// becomes terminated.
	OnTerminated func(Instance)
}

func (o Options) withDefaults() Options {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if len(o.Zones) == 0 {
		o.Zones = ZonesOf(o.Region)
	}
	if o.NotOffered == nil {
		o.NotOffered = NotOfferedIn(o.Zones)
	}
	if o.PriceFactor <= 0 {
		o.PriceFactor = 1
	}
	if o.ClusterTag == "" {
		o.ClusterTag = "joinery-local"
	}
	if o.AccountID == "" {
		o.AccountID = "123456789012"
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = DefaultKubernetesVersion
	}
	if o.Catalog == nil {
		o.Catalog = catalog.MustDefault()
	}
	o.BootDelay = delay.OrDefault(o.BootDelay, 2*time.Second)
	o.TerminateDelay = delay.OrDefault(o.TerminateDelay, time.Second)
	if o.TerminatedRetention <= 0 {
		o.TerminatedRetention = time.Hour
	}
	if o.VCPUQuota <= 0 {
		o.VCPUQuota = DefaultVCPUQuota
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
