package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Instance is the part of an EC2 instance Joinery uses.
type Instance struct {
	ID           string // e.g. "i-0123456789abcdef0"
	Type         string // instance type, e.g. "m5.large"
	Zone         string // e.g. "us-east-1a"
	CapacityType string // "on-demand", "spot" or "reserved"
	// CapacityReservationID is the capacity reservation the instance runs
	// in ("" for none); such an instance's CapacityType is "reserved".
	CapacityReservationID string
	// ReservationType ("default" or "capacity-block") and
	// ReservationInterruptible are the kind of that reservation, from the
	// instance's lifecycle as Karpenter reads it.
	ReservationType          string
	ReservationInterruptible bool
	// State is EC2's state name: pending, running, shutting-down,
	// terminated, stopping or stopped.
	State string
	// LaunchTime is when EC2 launched the instance; zero in Launch's result
	// (CreateFleet does not say), known from Get and List.
	LaunchTime time.Time
	// PrivateDNSName is the instance's internal host name, which EKS nodes
	// use as Node name, e.g. "ip-10-0-64-4.ec2.internal"; empty in Launch's
	// result, known from Get and List.
	PrivateDNSName string
	Tags           map[string]string
	// PlacementGroupID is the placement group the instance runs in, and
	// PartitionNumber its partition in a partition group; known from Get
	// and List, not from Launch.
	PlacementGroupID string `json:",omitempty"`
	PartitionNumber  int32  `json:",omitempty"`
}

// ProviderID is the Kubernetes Node spec.providerID of the instance:
// aws:///<zone>/<id>.
func (i Instance) ProviderID() string { return "aws:///" + i.Zone + "/" + i.ID }

// Instance state names.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
)

func fromEC2(in types.Instance) Instance {
	out := Instance{
		ID:             aws.ToString(in.InstanceId),
		Type:           string(in.InstanceType),
		CapacityType:   apiv1.CapacityTypeOnDemand,
		PrivateDNSName: aws.ToString(in.PrivateDnsName),
		LaunchTime:     aws.ToTime(in.LaunchTime),
		Tags:           map[string]string{},
	}
	if in.InstanceLifecycle == types.InstanceLifecycleTypeSpot {
		out.CapacityType = apiv1.CapacityTypeSpot
	}
	// As Karpenter: reserved only when launched into the reservation on
	// purpose; an on-demand launch that an open reservation happened to
	// take stays on-demand.
	if id := aws.ToString(in.CapacityReservationId); id != "" && targeted(in) {
		out.CapacityType, out.CapacityReservationID = apiv1.CapacityTypeReserved, id
		out.ReservationType = apiv1.CapacityReservationTypeDefault
		if in.InstanceLifecycle == types.InstanceLifecycleTypeCapacityBlock {
			out.ReservationType = apiv1.CapacityReservationTypeCapacityBlock
		}
		out.ReservationInterruptible = in.InstanceLifecycle == types.InstanceLifecycleTypeInterruptibleCapacityReservation
	}
	if in.Placement != nil {
		out.Zone = aws.ToString(in.Placement.AvailabilityZone)
		out.PlacementGroupID, out.PartitionNumber = aws.ToString(in.Placement.GroupId), aws.ToInt32(in.Placement.PartitionNumber)
	}
	if in.State != nil {
		out.State = string(in.State.Name)
	}
	for _, t := range in.Tags {
		out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// targeted says whether the instance was launched with the
// capacity-reservations-only preference.
func targeted(in types.Instance) bool {
	spec := in.CapacityReservationSpecification
	return spec != nil && spec.CapacityReservationPreference == types.CapacityReservationPreferenceCapacityReservationsOnly
}

// Get returns the instance with the given id. An instance EC2 does not know
// or that is terminated is an error wrapping ErrNotFound (IsNotFound).
// Concurrent Gets share DescribeInstances calls (instancebatch.go): one
// call answers up to 200 of them.
func (c *Client) Get(ctx context.Context, id string) (Instance, error) {
	inst, err := c.describes.do(ctx, id)
	if err != nil {
		return Instance{}, err
	}
	if inst.State == StateTerminated {
		return Instance{}, fmt.Errorf("instance %s is terminated: %w", id, ErrNotFound)
	}
	return inst, nil
}

// GetAll looks the instances up together (batched as Get): those EC2
// shows, by id, terminated ones included (EC2 shows them for about an
// hour, and "terminated" is surer than "not seen", which may only mean
// not seen yet); the others are left out. A lookup failing otherwise than
// "not found" (a throttle, say) fails it.
func (c *Client) GetAll(ctx context.Context, ids []string) (map[string]Instance, error) {
	res := c.describes.doAll(ctx, ids)
	out := make(map[string]Instance, len(ids))
	for _, id := range ids {
		o := res[id]
		switch {
		case IsNotFound(o.err):
		case o.err != nil:
			return nil, fmt.Errorf("look up instance %s: %w", id, o.err)
		default:
			out[id] = o.val
		}
	}
	return out, nil
}

// List returns every instance tagged with this cluster that is not
// terminated, in EC2's order, following pagination.
func (c *Client) List(ctx context.Context) ([]Instance, error) {
	return c.list(ctx)
}

// ForNodeClaim returns the live instances tagged with the NodeClaim (at most
// one unless a launch was repeated behind Joinery's back).
func (c *Client) ForNodeClaim(ctx context.Context, nodeClaim string) ([]Instance, error) {
	return c.list(ctx, types.Filter{Name: aws.String("tag:" + apiv1.TagNodeClaim), Values: []string{nodeClaim}})
}

// list returns the cluster's live instances the filters select.
func (c *Client) list(ctx context.Context, extra ...types.Filter) ([]Instance, error) {
	return c.describe(ctx, append([]types.Filter{{Name: aws.String("instance-state-name"), Values: []string{
		StatePending, StateRunning, StateShuttingDown, "stopping", "stopped"}}}, extra...)...)
}

// describe returns the cluster's instances the filters select, in any
// state (EC2 lists terminated ones for about an hour).
func (c *Client) describe(ctx context.Context, filters ...types.Filter) ([]Instance, error) {
	in := &ec2.DescribeInstancesInput{
		Filters: append([]types.Filter{
			{Name: aws.String("tag:" + apiv1.TagCluster), Values: []string{c.opts.ClusterName}},
		}, filters...),
		MaxResults: aws.Int32(1000),
	}
	var all []Instance
	p := ec2.NewDescribeInstancesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstances: %w", err)
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				all = append(all, fromEC2(inst))
			}
		}
	}
	return all, nil
}

// Terminate terminates the instances. It is idempotent: instances already
// shutting down, terminated or unknown to EC2 count as done. Concurrent
// Terminates share TerminateInstances calls (instancebatch.go). Instances
// still throttled once the SDK's retries are spent are asked for again,
// backing off from 1 s to 30 s, until ctx ends: EC2's buckets refill, and
// a caller failing meanwhile would only come back to ask. The error is the
// first instance's, in ids' order.
func (c *Client) Terminate(ctx context.Context, ids ...string) error {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		res := c.terminations.doAll(ctx, ids)
		var throttled []string
		for _, id := range ids {
			switch err := res[id].err; {
			case err == nil || IsNotFound(err):
			case IsThrottled(err) && ctx.Err() == nil:
				throttled = append(throttled, id)
			default:
				return err
			}
		}
		if len(throttled) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return res[throttled[0]].err
		case <-time.After(wait):
		}
		ids = throttled
	}
}
