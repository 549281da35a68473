package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// ImpairedInstance is a running instance whose EC2 status check fails.
type ImpairedInstance struct {
	ID string
	// Check is "instance" or "system", the failing status check.
	Check string
	// Since is when the check began to fail (its earliest failed
	// detail's ImpairedSince; the answer's time when EC2 gives none).
	Since time.Time
}

// ImpairedInstances lists the running instances whose instance or system
// status check is impaired, as Karpenter's status controller asks EC2:
// one filtered, paginated DescribeInstanceStatus query per check.
func (c *Client) ImpairedInstances(ctx context.Context) ([]ImpairedInstance, error) {
	var out []ImpairedInstance
	for _, check := range []string{"instance", "system"} {
		in := &ec2.DescribeInstanceStatusInput{MaxResults: aws.Int32(1000),
			Filters: []types.Filter{{Name: aws.String(check + "-status.status"), Values: []string{string(types.SummaryStatusImpaired)}}}}
		p := ec2.NewDescribeInstanceStatusPaginator(c.ec2, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("DescribeInstanceStatus: %w", err)
			}
			for _, st := range page.InstanceStatuses {
				sum := st.InstanceStatus
				if check == "system" {
					sum = st.SystemStatus
				}
				out = append(out, ImpairedInstance{ID: aws.ToString(st.InstanceId), Check: check, Since: impairedSince(sum)})
			}
		}
	}
	return out, nil
}

// impairedSince is the earliest ImpairedSince of the summary's failed
// details (now when EC2 names none).
func impairedSince(sum *types.InstanceStatusSummary) time.Time {
	var since time.Time
	if sum != nil {
		for _, d := range sum.Details {
			if d.Status == types.StatusTypeFailed && d.ImpairedSince != nil && (since.IsZero() || d.ImpairedSince.Before(since)) {
				since = *d.ImpairedSince
			}
		}
	}
	if since.IsZero() {
		return time.Now()
	}
	return since
}
