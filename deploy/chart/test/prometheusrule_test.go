package charttest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestRenderPrometheusRule: prometheusRule.enabled renders one
// PrometheusRule with the extra labels, whose spec is the spec of
// deploy/prometheusrule.yaml (which deploy's tests validate); off by default.
func TestRenderPrometheusRule(t *testing.T) {
	if n := len(find(mustRender(t, minimal), "PrometheusRule")); n != 0 {
		t.Errorf("%d PrometheusRules rendered by default, want none", n)
	}
	objs := mustRender(t, minimal+`prometheusRule: {enabled: true, labels: {release: kube-prometheus-stack}}`)
	var got struct {
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name, Namespace string
			Labels          map[string]string
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	o := one(t, objs, "PrometheusRule")
	if err := yaml.Unmarshal(o.raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.APIVersion != "monitoring.coreos.com/v1" || got.Metadata.Namespace != namespace || got.Metadata.Labels["release"] != "kube-prometheus-stack" ||
		got.Metadata.Labels["app.kubernetes.io/name"] != "joinery" {
		t.Errorf("PrometheusRule %s/%s %s labels %v", got.Metadata.Namespace, got.Metadata.Name, got.APIVersion, got.Metadata.Labels)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Spec) == 0 || !reflect.DeepEqual(got.Spec, want.Spec) {
		t.Error("the chart's PrometheusRule spec differs from deploy/prometheusrule.yaml's")
	}
}
