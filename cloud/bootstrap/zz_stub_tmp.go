package bootstrap

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
)

type Cluster struct {
	Name, Endpoint, CABundle, ServiceCIDR, DNSIP string
}
type Options struct {
	Family   string
	Cluster  Cluster
	Labels   map[string]string
	Taints   []corev1.Taint
	Kubelet  *apiv1.KubeletConfiguration
	MaxPods  int32
	UserData *string
}

func Generate(o Options) (string, error)                  { return "", nil }
func FamilyOf(spec *apiv1.EC2NodeClassSpec) (string, error) { return "", nil }
