package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Image is an AMI as DescribeImages answers it.
type Image struct {
	ID, Name, Architecture, CreationDate, OwnerID string
	Deprecated                                    bool
	Tags                                          map[string]string
}

// ImageQuery selects images: by IDs, and/or by Names (wildcards * and ?),
// Owners (account ids, "amazon", "self") and Tags (value "*": any value),
// ANDed. Only available images are returned, deprecated ones included.
type ImageQuery struct {
	IDs, Names, Owners []string
	Tags               map[string]string
}

// DescribeImages returns the images the query selects (following
// pagination), newest CreationDate first, ties by name. An id EC2 does not
// know is an error (InvalidAMIID.NotFound).
func (c *Client) DescribeImages(ctx context.Context, q ImageQuery) ([]Image, error) {
	if len(q.IDs) == 0 && len(q.Names) == 0 && len(q.Owners) == 0 && len(q.Tags) == 0 {
		return nil, errors.New("DescribeImages: empty image query")
	}
	in := &ec2.DescribeImagesInput{
		ImageIds: q.IDs, Owners: q.Owners, IncludeDeprecated: aws.Bool(true),
		Filters: []types.Filter{{Name: aws.String("state"), Values: []string{"available"}}},
	}
	if len(q.Names) > 0 {
		in.Filters = append(in.Filters, types.Filter{Name: aws.String("name"), Values: q.Names})
	}
	for _, k := range slices.Sorted(maps.Keys(q.Tags)) {
		if v := q.Tags[k]; v == "*" {
			in.Filters = append(in.Filters, types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			in.Filters = append(in.Filters, types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	if len(q.IDs) == 0 {
		in.MaxResults = aws.Int32(1000)
	}
	var out []Image
	p := ec2.NewDescribeImagesPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeImages: %w", err)
		}
		for _, im := range page.Images {
			img := Image{
				ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Architecture: string(im.Architecture),
				CreationDate: aws.ToString(im.CreationDate), OwnerID: aws.ToString(im.OwnerId), Tags: map[string]string{},
			}
			// EC2 sets DeprecationTime on deprecated images; a time in the
			// future means "will be deprecated".
			if d := aws.ToString(im.DeprecationTime); d != "" {
				img.Deprecated = d <= nowISO()
			}
			for _, t := range im.Tags {
				img.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			out = append(out, img)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreationDate != out[j].CreationDate {
			return out[i].CreationDate > out[j].CreationDate
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// GetParameter reads one SSM parameter (the EKS image parameters are
// public: /aws/service/...). found is false when SSM answers
// ParameterNotFound.
func (c *Client) GetParameter(ctx context.Context, name string) (value string, found bool, err error) {
	out, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		if errorCode(err) == "ParameterNotFound" {
			return "", false, nil
		}
		return "", false, fmt.Errorf("ssm GetParameter %s: %w", name, err)
	}
	if out.Parameter == nil {
		return "", false, fmt.Errorf("ssm GetParameter %s: empty answer", name)
	}
	return aws.ToString(out.Parameter.Value), true, nil
}
