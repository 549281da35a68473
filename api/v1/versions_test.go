package v1

import "testing"

func TestOlderVersion(t *testing.T) {
	for _, c := range []struct {
		apiVersion, kind, file string
		want                   string
		old                    bool
	}{
		{"karpenter.sh/v1", "NodePool", "a.yaml", "", false},
		{"karpenter.k8s.aws/v1", "EC2NodeClass", "a.yaml", "", false},
		{"apps/v1", "Deployment", "a.yaml", "", false},
		{"v1", "Pod", "a.yaml", "", false},
		{"karpenter.sh/v1beta1", "NodePool", "old.yaml", "convert it with `starter migrate -f old.yaml` (Joinery serves karpenter.sh/v1)", true},
		{"karpenter.k8s.aws/v1beta1", "EC2NodeClass", "", "convert it with `starter migrate -f FILE` (Joinery serves karpenter.k8s.aws/v1)", true},
		{"karpenter.sh/v1beta1", "NodeClaim", "old.yaml", "NodeClaims are created by the controller, not applied: remove it from the manifests", true},
		{"karpenter.sh/v1alpha5", "Provisioner", "old.yaml", "convert it to v1beta1 first (Karpenter's karpenter-convert), then with `starter migrate -f old.yaml`", true},
		{"karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate", "old.yaml", "convert it to v1beta1 first (Karpenter's karpenter-convert), then with `starter migrate -f old.yaml`", true},
		{"karpenter.sh/v2", "NodePool", "a.yaml", "not a served version: Joinery serves karpenter.sh/v1", true},
	} {
		got, old := OlderVersion(c.apiVersion, c.kind, c.file)
		if got != c.want || old != c.old {
			t.Errorf("%s %s: %q, %v; want %q, %v", c.apiVersion, c.kind, got, old, c.want, c.old)
		}
	}
}
