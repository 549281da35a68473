package controller

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// clusterFacts resolves what a node's user data needs to join: each value
// from its flag; the endpoint, CA and service CIDR from eks:DescribeCluster
// when a flag leaves them out (the CA falls back to the controller's own
// REST config, as Karpenter's does). The DNS IP is the flag's or
// spec.kubelet.clusterDNS; without either the node agent derives it from
// the service CIDR (nodeadm takes its tenth address).
func clusterFacts(ctx context.Context, cfg Config, cc *aws.Client, log *zap.Logger) (bootstrap.Cluster, error) {
	f := bootstrap.Cluster{
		Name: cfg.ClusterName, Endpoint: cfg.ClusterEndpoint, CABundle: cfg.ClusterCABundle,
		ServiceCIDR: cfg.ServiceCIDR, DNSIP: cfg.ClusterDNS,
	}
	if f.Endpoint == "" || f.ServiceCIDR == "" || f.CABundle == "" {
		info, err := describeCluster(ctx, cc, cfg.ClusterName)
		switch {
		case err == nil:
			f.Endpoint = firstNonEmpty(f.Endpoint, info.Endpoint)
			f.CABundle = firstNonEmpty(f.CABundle, info.CABundle)
			f.ServiceCIDR = firstNonEmpty(f.ServiceCIDR, info.ServiceCIDR)
		case f.Endpoint == "":
			return f, fmt.Errorf("cluster endpoint: pass --cluster-endpoint or allow eks:DescribeCluster on %q: %w", cfg.ClusterName, err)
		default:
			log.Warn("eks:DescribeCluster failed; using flags and the REST config", zap.Error(err))
		}
	}
	if f.CABundle == "" {
		f.CABundle = restCA(cfg.RESTConfig)
	}
	if f.CABundle == "" {
		return f, fmt.Errorf("cluster CA bundle: pass --cluster-ca-bundle (base64 PEM)")
	}
	log.Info("cluster facts for user data", zap.String("cluster", f.Name), zap.String("endpoint", f.Endpoint),
		zap.String("serviceCIDR", f.ServiceCIDR), zap.String("dnsIP", f.DNSIP), zap.Int("caBytes", len(f.CABundle)))
	return f, nil
}

// describeCluster retries a few times: the EKS API may be briefly
// unreachable while the controller starts.
func describeCluster(ctx context.Context, cc *aws.Client, name string) (aws.ClusterInfo, error) {
	var err error
	for i := 0; i < 5; i++ {
		var info aws.ClusterInfo
		if info, err = cc.DescribeCluster(ctx, name); err == nil {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return aws.ClusterInfo{}, ctx.Err()
		case <-time.After(time.Duration(i+1) * time.Second):
		}
	}
	return aws.ClusterInfo{}, err
}

// restCA is the CA the controller itself trusts: inline (a kubeconfig) or
// the in-cluster service account's ca.crt file.
func restCA(rc *rest.Config) string {
	if rc == nil {
		return ""
	}
	data := rc.CAData
	if len(data) == 0 && rc.CAFile != "" {
		data, _ = os.ReadFile(rc.CAFile)
	}
	if len(data) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(data)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
