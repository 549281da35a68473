package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Subnet is a subnet instances can be launched into.
type Subnet struct {
	ID           string
	Zone         string // e.g. "us-east-1a"
	ZoneID       string // e.g. "use1-az1"
	AvailableIPs int32  // free IPv4 addresses
	CIDRBlock    string // e.g. "10.0.0.0/18"
}

// SecurityGroup is a security group a NodeClass selects.
type SecurityGroup struct {
	ID   string
	Name string
}

// termFilters turns a selector term into EC2 filters ANDed together: id ->
// idFilter, name -> nameFilter, each tag -> tag:<key>=<value>, or tag-key
// when the value is "*" (any value, as Karpenter reads it).
func termFilters(t apiv1.SelectorTerm, idFilter, nameFilter string) ([]types.Filter, error) {
	var fs []types.Filter
	if t.ID != "" {
		fs = append(fs, types.Filter{Name: aws.String(idFilter), Values: []string{t.ID}})
	}
	if t.Name != "" {
		fs = append(fs, types.Filter{Name: aws.String(nameFilter), Values: []string{t.Name}})
	}
	for _, k := range slices.Sorted(maps.Keys(t.Tags)) {
		v := t.Tags[k]
		if v == "*" {
			fs = append(fs, types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			fs = append(fs, types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	if len(fs) == 0 {
		return nil, errors.New("empty selector term")
	}
	return fs, nil
}

// Subnets resolves selector terms (ORed; a term's id, name and tags ANDed)
// to subnets, deduplicated and sorted by zone then id. A term that matches
// nothing adds nothing.
func (c *Client) Subnets(ctx context.Context, terms []apiv1.SelectorTerm) ([]Subnet, error) {
	byID := map[string]Subnet{}
	for i, t := range terms {
		fs, err := termFilters(t, "subnet-id", "tag:Name")
		if err != nil {
			return nil, fmt.Errorf("subnet selector term %d: %w", i, err)
		}
		p := ec2.NewDescribeSubnetsPaginator(c.ec2, &ec2.DescribeSubnetsInput{Filters: fs})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("DescribeSubnets: %w", err)
			}
			for _, sn := range page.Subnets {
				id := aws.ToString(sn.SubnetId)
				byID[id] = Subnet{ID: id, Zone: aws.ToString(sn.AvailabilityZone), ZoneID: aws.ToString(sn.AvailabilityZoneId),
					AvailableIPs: aws.ToInt32(sn.AvailableIpAddressCount), CIDRBlock: aws.ToString(sn.CidrBlock)}
			}
		}
	}
	out := make([]Subnet, 0, len(byID))
	for _, sn := range byID {
		out = append(out, sn)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Zone != out[j].Zone {
			return out[i].Zone < out[j].Zone
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// SecurityGroups resolves selector terms (ORed; a term's id, name and tags
// ANDed; name matches the group name) to security groups, deduplicated and
// sorted by id.
func (c *Client) SecurityGroups(ctx context.Context, terms []apiv1.SelectorTerm) ([]SecurityGroup, error) {
	byID := map[string]SecurityGroup{}
	for i, t := range terms {
		fs, err := termFilters(t, "group-id", "group-name")
		if err != nil {
			return nil, fmt.Errorf("security group selector term %d: %w", i, err)
		}
		p := ec2.NewDescribeSecurityGroupsPaginator(c.ec2, &ec2.DescribeSecurityGroupsInput{Filters: fs})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("DescribeSecurityGroups: %w", err)
			}
			for _, g := range page.SecurityGroups {
				id := aws.ToString(g.GroupId)
				byID[id] = SecurityGroup{ID: id, Name: aws.ToString(g.GroupName)}
			}
		}
	}
	out := make([]SecurityGroup, 0, len(byID))
	for _, g := range byID {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// InstanceTypeZones returns, for every instance type EC2 offers in the
// region, the zones it is offered in (DescribeInstanceTypeOfferings with
// LocationType availability-zone), zones sorted.
func (c *Client) InstanceTypeZones(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	p := ec2.NewDescribeInstanceTypeOfferingsPaginator(c.ec2, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: types.LocationTypeAvailabilityZone,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstanceTypeOfferings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			t := string(o.InstanceType)
			out[t] = append(out[t], aws.ToString(o.Location))
		}
	}
	for _, zs := range out {
		sort.Strings(zs)
	}
	return out, nil
}

// ProductLinux is the product description of Linux spot prices.
const ProductLinux = "Linux/UNIX"

// SpotPrices returns the spot price (USD/hour) of every instance type in
// every zone EC2 has one for, instanceType -> zone -> price: the newest
// point per pair of DescribeSpotPriceHistory for Linux/UNIX from now (the
// price in effect now), as Karpenter's pricing provider reads it.
func (c *Client) SpotPrices(ctx context.Context, now time.Time) (map[string]map[string]float64, error) {
	type point struct {
		price float64
		at    time.Time
	}
	newest := map[[2]string]point{}
	p := ec2.NewDescribeSpotPriceHistoryPaginator(c.ec2, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{ProductLinux}, StartTime: aws.Time(now),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeSpotPriceHistory: %w", err)
		}
		for _, sp := range page.SpotPriceHistory {
			price, err := strconv.ParseFloat(aws.ToString(sp.SpotPrice), 64)
			if err != nil || price <= 0 || sp.Timestamp == nil {
				continue // EC2 sends none of these; skip rather than misprice
			}
			k := [2]string{string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)}
			if old, ok := newest[k]; !ok || sp.Timestamp.After(old.at) {
				newest[k] = point{price, *sp.Timestamp}
			}
		}
	}
	out := map[string]map[string]float64{}
	for k, pt := range newest {
		if out[k[0]] == nil {
			out[k[0]] = map[string]float64{}
		}
		out[k[0]][k[1]] = pt.price
	}
	return out, nil
}

// SortByFreeAddresses orders subnets by free addresses, most first, ties by
// id (the order EC2NodeClass status lists them in).
func SortByFreeAddresses(sns []Subnet) []Subnet {
	out := append([]Subnet(nil), sns...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].AvailableIPs != out[j].AvailableIPs {
			return out[i].AvailableIPs > out[j].AvailableIPs
		}
		return out[i].ID < out[j].ID
	})
	return out
}
