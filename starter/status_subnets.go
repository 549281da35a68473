package main

import (
	"context"
	"fmt"
	"io"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/ec2"
)

// subnetStatus is one subnet in `starter status`, named as DescribeSubnets
// names its fields.
type subnetStatus struct {
	SubnetID                string `json:"subnetId"`
	AvailabilityZone        string `json:"availabilityZone"`
	CidrBlock               string `json:"cidrBlock"`
	AvailableIPAddressCount int32  `json:"availableIpAddressCount"`
}

// subnetFlags say where status reads the subnets: the running starter dev
// (its admin endpoint) unless an EC2 endpoint or real AWS is named.
type subnetFlags struct {
	admin, ec2URL, region, discoveryTag string
	realAWS                             bool
}

// subnets lists the subnets tagged karpenter.sh/discovery=<tag>, with
// their free addresses.
func (f subnetFlags) subnets(ctx context.Context) ([]subnetStatus, error) {
	opts := aws.Options{Region: f.region, Endpoint: f.ec2URL, ClusterName: "status", Key: localKey(f.ec2URL)}
	if !f.realAWS && f.ec2URL == "" {
		eps, err := worldEndpoints(ctx, f.admin)
		if err != nil {
			return nil, err
		}
		opts.Endpoint = eps.EC2
		opts.Key = aws.StaticKey{AccessKeyID: eps.AdminAccessKeyID, SecretAccessKey: eps.AdminSecretAccessKey}
		if opts.Region == "" {
			opts.Region = eps.Region
		}
	}
	c, err := aws.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	sns, err := c.Subnets(ctx, []apiv1.SelectorTerm{{Tags: map[string]string{ec2.DiscoveryTag: f.discoveryTag}}})
	if err != nil {
		return nil, err
	}
	out := make([]subnetStatus, 0, len(sns))
	for _, s := range sns {
		out = append(out, subnetStatus{SubnetID: s.ID, AvailabilityZone: s.Zone, CidrBlock: s.CIDRBlock, AvailableIPAddressCount: s.AvailableIPs})
	}
	return out, nil
}

// printSubnets writes the subnets' free addresses, one line each.
func printSubnets(w io.Writer, sns []subnetStatus) {
	fmt.Fprintln(w, "subnets (free addresses):")
	for _, s := range sns {
		fmt.Fprintf(w, "  %-26s %-12s %-16s %d\n", s.SubnetID, s.AvailabilityZone, s.CidrBlock, s.AvailableIPAddressCount)
	}
}
