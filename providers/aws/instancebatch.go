package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Batch sizes. A DescribeInstances filter takes at most 200 values
// (FilterLimitExceeded past that). TerminateInstances takes up to 1000
// ids, but a call draws its whole count from the termination resource
// bucket at once: smaller calls still pass when the bucket is low.
const (
	maxDescribeIDs  = 200
	maxTerminateIDs = 100
	batchIdle       = 100 * time.Millisecond
	batchMaxWait    = time.Second
	batchTimeout    = 2 * time.Minute
)

// newInstanceBatchers sets up the batchers Get and Terminate go through.
func (c *Client) newInstanceBatchers() {
	c.describes = &batcher[Instance]{idle: batchIdle, maxWait: batchMaxWait, maxIDs: maxDescribeIDs, timeout: batchTimeout, run: c.describeBatch}
	c.terminations = &batcher[string]{idle: batchIdle, maxWait: batchMaxWait, maxIDs: maxTerminateIDs, timeout: batchTimeout, run: c.terminateBatch}
}

func notFound(id string) error { return fmt.Errorf("instance %s: %w", id, ErrNotFound) }

func failAll[T any](ids []string, err error) map[string]outcome[T] {
	out := make(map[string]outcome[T], len(ids))
	for _, id := range ids {
		out[id] = outcome[T]{err: err}
	}
	return out
}

// describeBatch describes the instances in one call, by an instance-id
// filter: unlike a list of InstanceIds, a filter does not fail the whole
// call for one id EC2 does not know (yet), and it takes from EC2's larger
// DescribeInstances bucket. An id EC2 does not show answers ErrNotFound;
// terminated instances are answered as they are.
func (c *Client) describeBatch(ctx context.Context, ids []string) map[string]outcome[Instance] {
	in := &ec2.DescribeInstancesInput{
		Filters:    []types.Filter{{Name: aws.String("instance-id"), Values: ids}},
		MaxResults: aws.Int32(1000),
	}
	out := make(map[string]outcome[Instance], len(ids))
	p := ec2.NewDescribeInstancesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return failAll[Instance](ids, fmt.Errorf("DescribeInstances: %w", err))
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				out[aws.ToString(inst.InstanceId)] = outcome[Instance]{val: fromEC2(inst)}
			}
		}
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = outcome[Instance]{err: notFound(id)}
		}
	}
	return out
}

// terminateBatch terminates the instances in one call; each id's answer
// is its state after the call. EC2 refuses the whole call for one unknown
// id or one instance it may not terminate: the call is then split, never
// on a throttle (more calls would only be throttled more).
func (c *Client) terminateBatch(ctx context.Context, ids []string) map[string]outcome[string] {
	res, err := c.terminateCall(ctx, ids)
	switch {
	case err == nil:
		return res
	case len(ids) == 1 || IsThrottled(err) || ctx.Err() != nil:
		return failAll[string](ids, err)
	case IsNotFound(err):
		return c.terminateKnown(ctx, ids)
	}
	out := make(map[string]outcome[string], len(ids))
	for _, id := range ids {
		one, err := c.terminateCall(ctx, []string{id})
		if err != nil {
			one = failAll[string]([]string{id}, err)
		}
		out[id] = one[id]
	}
	return out
}

// terminateKnown terminates the ids EC2 shows (one describe says which)
// in one call; the others answer ErrNotFound.
func (c *Client) terminateKnown(ctx context.Context, ids []string) map[string]outcome[string] {
	out := map[string]outcome[string]{}
	var known []string
	for id, o := range c.describeBatch(ctx, ids) {
		switch {
		case o.err == nil:
			known = append(known, id)
		case IsNotFound(o.err):
			out[id] = outcome[string]{err: o.err}
		default:
			return failAll[string](ids, o.err)
		}
	}
	if len(known) == 0 {
		return out
	}
	res, err := c.terminateCall(ctx, known)
	if err != nil {
		res = failAll[string](known, err)
	}
	for id, o := range res {
		out[id] = o
	}
	return out
}

// terminateCall is one TerminateInstances call: each id's new state.
func (c *Client) terminateCall(ctx context.Context, ids []string) (map[string]outcome[string], error) {
	resp, err := c.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	if err != nil {
		return nil, fmt.Errorf("TerminateInstances: %w", err)
	}
	out := make(map[string]outcome[string], len(resp.TerminatingInstances))
	for _, sc := range resp.TerminatingInstances {
		state := ""
		if sc.CurrentState != nil {
			state = string(sc.CurrentState.Name)
		}
		out[aws.ToString(sc.InstanceId)] = outcome[string]{val: state}
	}
	return out, nil
}
