package aws

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// A shared CreateFleet tags every instance it launches alike, so which
// instance is whose cannot be written at launch. Every instance carries
// one member tag per NodeClaim of the batch instead (value: the batch's
// client token), and the instances are given out by a rule of the batch
// alone (pairBatch). A launch that lost its answer with its worker, or a
// NodeClaim deleted meanwhile, finds its instance by its member tag and
// that rule, whether or not the NodeClaim tag was written after.

const (
	// maxUserTags is EC2's limit of tags on one resource ("aws:" tags
	// aside); maxTagKey is its longest tag key.
	maxUserTags = 50
	maxTagKey   = 128
)

// batchMemberTag is the member tag of nodeClaim ("" when the key would
// pass EC2's 128 characters: such a launch goes alone).
func batchMemberTag(nodeClaim string) string {
	k := apiv1.TagLaunchBatchPrefix + nodeClaim
	if len(k) > maxTagKey {
		return ""
	}
	return k
}

// memberCap is how many NodeClaims one CreateFleet with these shared tags
// can serve: each instance carries a member tag per NodeClaim, then its
// own NodeClaim and Name tags, within EC2's 50.
func memberCap(shared map[string]string) int {
	user := 0
	for k := range shared {
		if !strings.HasPrefix(strings.ToLower(k), "aws:") {
			user++
		}
	}
	return min(maxFleetBatch, maxUserTags-user-2)
}

// batchMembers are the NodeClaims an instance's CreateFleet served, sorted.
func batchMembers(tags map[string]string) []string {
	var out []string
	for k := range tags {
		if name, ok := strings.CutPrefix(k, apiv1.TagLaunchBatchPrefix); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// pairBatch gives out one CreateFleet's instances to its NodeClaims: the
// i-th NodeClaim by name gets the i-th instance by id; the last go
// without when EC2 launched fewer.
func pairBatch(members []string, insts []Instance) map[string]Instance {
	members = slices.Sorted(slices.Values(members))
	insts = slices.SortedFunc(slices.Values(insts), func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	out := make(map[string]Instance, len(members))
	for i, m := range members {
		if i < len(insts) {
			out[m] = insts[i]
		}
	}
	return out
}

// Batched is what EC2 shows of the shared CreateFleets a NodeClaim's
// launches were part of.
type Batched struct {
	// Mine are the NodeClaim's instances of those batches, in launch
	// order, terminated ones included.
	Mine []Instance
	// Settling is how much longer EC2 may not show all of a batch (its
	// consistency window since the batch launched): pairing before then
	// could give another NodeClaim's instance. A batch shown with one
	// instance per member is whole (CreateFleet launches no more than
	// asked) and waits for nothing.
	Settling time.Duration
}

// FromBatch finds the instances shared CreateFleets launched for
// nodeClaim: the one a batch of this process launched, as it answered,
// else those EC2 shows. It lists terminated instances too (EC2 shows them
// for about an hour): the pairing needs every instance of the batch.
func (c *Client) FromBatch(ctx context.Context, nodeClaim string) (Batched, error) {
	key := batchMemberTag(nodeClaim)
	if key == "" {
		return Batched{}, nil
	}
	if c.fleets != nil {
		if in, ok := c.fleets.kept(nodeClaim); ok {
			return Batched{Mine: []Instance{in}}, nil
		}
	}
	all, err := c.describe(ctx, types.Filter{Name: aws.String("tag-key"), Values: []string{key}})
	if err != nil {
		return Batched{}, err
	}
	return c.mine(nodeClaim, key, all), nil
}

// mine pairs each batch (instances alike in nodeClaim's member tag value)
// and keeps nodeClaim's instance of it.
func (c *Client) mine(nodeClaim, key string, all []Instance) Batched {
	batches := map[string][]Instance{}
	for _, in := range all {
		batches[in.Tags[key]] = append(batches[in.Tags[key]], in)
	}
	var out Batched
	now := c.Clock().Now()
	for _, token := range slices.Sorted(maps.Keys(batches)) {
		insts := batches[token]
		members := batchMembers(insts[0].Tags)
		if len(insts) < len(members) { // partial: what is missing may come
			for _, in := range insts {
				out.Settling = max(out.Settling, in.LaunchTime.Add(c.ConsistencyWindow()).Sub(now))
			}
		}
		if in, ok := pairBatch(members, insts)[nodeClaim]; ok {
			out.Mine = append(out.Mine, in)
		}
	}
	slices.SortFunc(out.Mine, func(a, b Instance) int { return a.LaunchTime.Compare(b.LaunchTime) })
	return out
}

// Claim tags a batch's instance with its NodeClaim (and Name), as the
// launch that lost its answer would have.
func (c *Client) Claim(ctx context.Context, id, nodeClaim string) error {
	_, err := c.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []types.Tag{
		{Key: aws.String(apiv1.TagNodeClaim), Value: aws.String(nodeClaim)},
		{Key: aws.String(apiv1.TagName), Value: aws.String(nodeClaim)},
	}})
	return err
}
