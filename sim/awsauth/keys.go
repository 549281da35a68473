package awsauth

import (
	"maps"
	"slices"
	"strings"

	"github.com/joinery/joinery/sim/awsauth/policy"
)

// Partition is the AWS partition of a region: aws-cn for China, aws-us-gov
// for GovCloud, aws elsewhere.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// Keys builds a check's condition keys.
type Keys policy.Context

// Set sets a single-valued key (nothing when v is empty).
func (k Keys) Set(key, v string) Keys {
	if v != "" {
		k[key] = []string{v}
	}
	return k
}

// RequestTags sets aws:RequestTag/<key> for each tag the request applies
// and aws:TagKeys (sorted); nothing when there are none.
func (k Keys) RequestTags(tags map[string]string) Keys {
	if len(tags) == 0 {
		return k
	}
	for t, v := range tags {
		k["aws:RequestTag/"+t] = []string{v}
	}
	k["aws:TagKeys"] = slices.Sorted(maps.Keys(tags))
	return k
}

// ResourceTags sets aws:ResourceTag/<key> for each tag the resource has,
// and the service's own alias (ec2:ResourceTag/<key>, iam:ResourceTag/...)
// when service is set.
func (k Keys) ResourceTags(service string, tags map[string]string) Keys {
	for t, v := range tags {
		k["aws:ResourceTag/"+t] = []string{v}
		if service != "" {
			k[service+":ResourceTag/"+t] = []string{v}
		}
	}
	return k
}

// Context is the keys as a policy.Context.
func (k Keys) Context() policy.Context { return policy.Context(k) }
