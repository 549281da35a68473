package kube

import (
	"encoding/base64"
	"fmt"

	"k8s.io/client-go/rest"
)

// kubeconfigFile is the admin kubeconfig's name inside StateDir.
const kubeconfigFile = "admin.kubeconfig"

// Names used in the kubeconfig.
const (
	kubeconfigCluster = "joinery-local"
	kubeconfigContext = "joinery-local"
	kubeconfigUser    = "joinery-admin"
)

// kubeconfigYAML renders a self-contained kubeconfig (certificates inline) for
// the admin client cert, usable by kubectl and by the scheduler, the
// controller-manager and kwok.
func kubeconfigYAML(server string, p *pki) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, `# Written by joinery sim/kube on every start; cluster-admin (system:masters) on the local control plane.
apiVersion: v1
kind: Config
clusters:
- name: %[2]s
  cluster:
    server: %[1]s
    certificate-authority-data: %[5]s
users:
- name: %[4]s
  user:
    client-certificate-data: %[6]s
    client-key-data: %[7]s
contexts:
- name: %[3]s
  context:
    cluster: %[2]s
    user: %[4]s
current-context: %[3]s
preferences: {}
`, server, kubeconfigCluster, kubeconfigContext, kubeconfigUser, b64(p.caCert), b64(p.adminCert), b64(p.adminKey))
}

// restConfigFor returns an admin *rest.Config for server. QPS and Burst are
// raised from client-go's 5/10: the apiserver is local and tests create many
// objects quickly.
func restConfigFor(server string, p *pki) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   append([]byte(nil), p.caCert...),
			CertData: append([]byte(nil), p.adminCert...),
			KeyData:  append([]byte(nil), p.adminKey...),
		},
		QPS:   200,
		Burst: 400,
	}
}
