package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// ClusterInfo are the cluster facts nodes need to join: the API endpoint,
// the CA bundle (base64 of the PEM, as EKS answers it) and the service
// CIDR.
type ClusterInfo struct{ Endpoint, CABundle, ServiceCIDR string }

// DescribeCluster reads the EKS cluster's facts. A cluster that is not
// ACTIVE, or an answer without endpoint or CA, is an error naming what is
// missing.
func (c *Client) DescribeCluster(ctx context.Context, name string) (ClusterInfo, error) {
	out, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return ClusterInfo{}, fmt.Errorf("eks DescribeCluster %s: %w", name, err)
	}
	cl := out.Cluster
	if cl == nil {
		return ClusterInfo{}, fmt.Errorf("eks DescribeCluster %s: empty answer", name)
	}
	if cl.Status != "ACTIVE" {
		return ClusterInfo{}, fmt.Errorf("eks cluster %s is %s, not ACTIVE", name, cl.Status)
	}
	info := ClusterInfo{Endpoint: aws.ToString(cl.Endpoint)}
	if cl.CertificateAuthority != nil {
		info.CABundle = aws.ToString(cl.CertificateAuthority.Data)
	}
	if n := cl.KubernetesNetworkConfig; n != nil {
		info.ServiceCIDR = aws.ToString(n.ServiceIpv4Cidr)
		if info.ServiceCIDR == "" {
			info.ServiceCIDR = aws.ToString(n.ServiceIpv6Cidr)
		}
	}
	if info.Endpoint == "" || info.CABundle == "" {
		return ClusterInfo{}, fmt.Errorf("eks cluster %s: answer lacks endpoint or certificateAuthority.data", name)
	}
	return info, nil
}
