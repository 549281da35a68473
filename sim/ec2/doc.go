// Package ec2 is a local Amazon EC2 endpoint for the local world and tests.
//
// Server is an http.Handler that speaks the EC2 Query protocol (form-encoded
// POST with Action and Version=2016-11-15, XML responses in the
// http://ec2.amazonaws.com/doc/2016-11-15/ namespace, errors as
// <Response><Errors><Error>...) closely enough that the real
// aws-sdk-go-v2 EC2 client accepts it when pointed at it with BaseEndpoint.
// Request signatures are not checked.
//
// It serves the embedded EC2 catalog (package catalog): instance types,
// per-zone offerings, on-demand and spot prices. Zones differ, by a fixed
// rule: Options.NotOffered (default DefaultNotOffered) leaves some
// families out of some zones (DescribeInstanceTypeOfferings omits them,
// CreateFleet answers Unsupported), and a zone's spot price is the
// catalog's times a factor in [0.9, 1.1] hashed from the type and zone,
// moved during a test with SetSpotPrice (DescribeSpotPriceHistory shows
// the points; spot launches pay the zone's current price); one subnet per zone and one
// security group, both tagged karpenter.sh/discovery=<ClusterTag>; and
// instances launched with CreateFleet (Type=instant) that boot after
// BootDelay and terminate after TerminateDelay.
//
// Supported actions: CreateFleet, DescribeInstances, TerminateInstances,
// CreateTags, DescribeInstanceTypes, DescribeInstanceTypeOfferings,
// DescribeSpotPriceHistory, DescribeSubnets, DescribeSecurityGroups, CreateLaunchTemplate,
// DescribeLaunchTemplates, DeleteLaunchTemplate, DescribeImages,
// DescribeInstanceAttribute (userData), DescribeInstanceStatus (Impair). Others
// answer InvalidAction.
//
// Images: the EKS-optimized AL2023 (x86_64 standard/nvidia/neuron, arm64
// standard/nvidia), AL2 (x86_64, arm64, gpu) and Bottlerocket (aws-k8s,
// -nvidia; x86_64, arm64) images of each release for
// Options.KubernetesVersion, with the public SSM parameters pointing at them
// (SSMParameter, served by package sim/ssm). PublishImageRelease adds a
// release and repoints `recommended`/`latest`.
//
// CreateFleet is as strict as EC2: the launch template must exist
// (request-level InvalidLaunchTemplateName.NotFoundException /
// InvalidLaunchTemplateId.NotFound); per override, in the answer's Errors:
// an unknown image (InvalidAMIID.NotFound), an image of another
// architecture than the instance type (InvalidParameterValue), an unknown
// subnet (InvalidSubnetID.NotFound) or security group
// (InvalidGroup.NotFound), a type the zone does not sell (Unsupported),
// a subnet without free addresses
// (InsufficientFreeAddressesInSubnet, SetSubnetAvailable), an instance
// profile Options.InstanceProfile does not know (InvalidParameterValue
// "Invalid IAM Instance Profile name"). Instances record the template's
// user data, image, profile, groups, metadata options and block devices.
//
// Faults for tests and chaos runs: insufficient capacity per pool
// (SetInsufficientCapacity) or at random (SetICEFraction), throttling with
// RequestLimitExceeded (SetThrottleFraction), and added latency (SetLatency).
// Random draws come from a generator seeded with Options.Seed.
//
// Clients: the endpoint answers fast enough to trigger a known
// aws-sdk-go-v2 race (issues #1825, #2737): the SDK closes a streamed request
// body as soon as response headers arrive, net/http then fails its
// end-of-body check and closes the connection under a large response
// ("use of closed network connection"). Send request bodies from memory, as
// package cloud does, or rely on the SDK's retry of that error.
package ec2
