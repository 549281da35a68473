// Package charttest renders deploy/chart/joinery with Helm's own template
// engine (helm.sh/helm/v3: chart loader, chartutil values, engine) the way
// `helm template` does, and checks what comes out. It is a separate module
// so Helm's dependencies stay out of Joinery's go.mod; hack/test.sh runs it.
package charttest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../joinery"
	repoRoot  = "../../.."
	namespace = "joinery-system"
)

// object is one rendered manifest: its file, kind, name and raw YAML.
type object struct {
	file, kind, apiVersion, name, namespace string
	raw                                     []byte
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	if err := ch.Validate(); err != nil {
		t.Fatalf("chart metadata: %v", err)
	}
	return ch
}

// render renders the chart with the given values (YAML, merged over
// values.yaml) as release "joinery" in joinery-system, as `helm template`
// would, and returns the manifests sorted by file and position.
func render(t *testing.T, valuesYAML string) ([]object, error) {
	t.Helper()
	ch := loadChart(t)
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{
		Name: "joinery", Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []object
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue // NOTES.txt, _helpers.tpl
		}
		docs := releaseutil.SplitManifests(files[n])
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			doc := strings.TrimSpace(docs[k])
			if doc == "" || isOnlyComments(doc) {
				continue
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", n, err, doc)
			}
			if meta.APIVersion == "" || meta.Kind == "" || meta.Metadata.Name == "" {
				t.Fatalf("%s: apiVersion, kind and metadata.name are required:\n%s", n, doc)
			}
			out = append(out, object{file: n, kind: meta.Kind, apiVersion: meta.APIVersion,
				name: meta.Metadata.Name, namespace: meta.Metadata.Namespace, raw: []byte(doc)})
		}
	}
	return out, nil
}

func isOnlyComments(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func mustRender(t *testing.T, valuesYAML string) []object {
	t.Helper()
	objs, err := render(t, valuesYAML)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return objs
}

// strict decodes o into a typed Kubernetes object, failing on unknown fields.
func strict(t *testing.T, o object, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(o.raw, into); err != nil {
		t.Fatalf("%s %s (%s): does not parse as a Kubernetes object: %v\n%s", o.kind, o.name, o.file, err, o.raw)
	}
}

func find(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func one(t *testing.T, objs []object, kind string) object {
	t.Helper()
	f := find(objs, kind)
	if len(f) != 1 {
		t.Fatalf("%d %s objects rendered, want 1", len(f), kind)
	}
	return f[0]
}

const minimal = `
clusterName: prod-eks
aws: {region: eu-west-1}
`

// typed parses every rendered object into its client-go type (strict), so a
// misspelled or misplaced field fails here rather than at `helm install`.
func typed(t *testing.T, objs []object) {
	t.Helper()
	for _, o := range objs {
		var into any
		switch o.kind {
		case "Deployment":
			into = &appsv1.Deployment{}
		case "ServiceAccount":
			into = &corev1.ServiceAccount{}
		case "Service":
			into = &corev1.Service{}
		case "ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding":
			into = &rbacv1.ClusterRoleBinding{}
		case "Role":
			into = &rbacv1.Role{}
		case "RoleBinding":
			into = &rbacv1.RoleBinding{}
		case "PodDisruptionBudget":
			into = &policyv1.PodDisruptionBudget{}
		case "ServiceMonitor":
			into = &serviceMonitor{}
		case "ConfigMap":
			into = &corev1.ConfigMap{}
		default:
			t.Errorf("unexpected kind %s (%s): add it to this test", o.kind, o.file)
			continue
		}
		strict(t, o, into)
		if o.kind != "ClusterRole" && o.kind != "ClusterRoleBinding" && o.namespace != namespace {
			t.Errorf("%s %s: namespace %q, want the release namespace %q", o.kind, o.name, o.namespace, namespace)
		}
	}
}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// chart writes (prometheus-operator's Go types are not worth the dependency).
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func deployment(t *testing.T, objs []object) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	strict(t, one(t, objs, "Deployment"), &d)
	return &d
}

func TestRenderDefaults(t *testing.T) {
	objs := mustRender(t, minimal)
	typed(t, objs)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.kind)
	}
	sort.Strings(kinds)
	want := []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("rendered kinds %v, want %v (no ServiceMonitor by default)", kinds, want)
	}

	d := deployment(t, objs)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--temporal-address=temporal-frontend.temporal.svc:7233",
		"--temporal-namespace=default",
		"--cluster-name=prod-eks",
		"--region=eu-west-1",
		"--metrics-addr=:8080",
		"--log-level=info",
		"--leader-elect=true",
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", c.Args, wantArgs)
	}
	if c.Image != "ghcr.io/joinery/joinery:0.1.0" {
		t.Errorf("image %q: want the appVersion tag by default", c.Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 || c.Ports[0].Name != "http-metrics" {
		t.Errorf("ports %+v", c.Ports)
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "http-metrics" {
			t.Errorf("probe %+v", p)
		}
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "TEMPORAL_") {
			t.Errorf("env %s set without TLS/API key values", e.Name)
		}
	}
	if d.Spec.Template.Spec.ServiceAccountName != "joinery" {
		t.Errorf("serviceAccountName %q", d.Spec.Template.Spec.ServiceAccountName)
	}
	if a := d.Spec.Template.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.PodAntiAffinity == nil {
		t.Errorf("default affinity missing: %+v", a)
	} else if e := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]; e.Key != "karpenter.sh/nodepool" || e.Operator != corev1.NodeSelectorOpDoesNotExist {
		t.Errorf("default node affinity %+v: the worker must stay off nodes it manages", e)
	}
	if d.Spec.Template.Annotations["karpenter.sh/do-not-disrupt"] != "true" {
		t.Errorf("pod annotations %v", d.Spec.Template.Annotations)
	}

	// Selectors line up: Service and PDB pick the Deployment's pods, the
	// binding names the ClusterRole and the ServiceAccount.
	podLabels := d.Spec.Template.Labels
	matches := func(sel map[string]string) bool {
		if len(sel) == 0 {
			return false
		}
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return true
	}
	if !matches(d.Spec.Selector.MatchLabels) {
		t.Errorf("deployment selector %v does not match its pods %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	var svc corev1.Service
	strict(t, one(t, objs, "Service"), &svc)
	if !matches(svc.Spec.Selector) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].Name != "http-metrics" {
		t.Errorf("service %+v", svc.Spec)
	}
	var pdb policyv1.PodDisruptionBudget
	strict(t, one(t, objs, "PodDisruptionBudget"), &pdb)
	if !matches(pdb.Spec.Selector.MatchLabels) || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("pdb %+v", pdb.Spec)
	}
	var crb rbacv1.ClusterRoleBinding
	strict(t, one(t, objs, "ClusterRoleBinding"), &crb)
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != one(t, objs, "ClusterRole").name ||
		len(crb.Subjects) != 1 || crb.Subjects[0].Name != one(t, objs, "ServiceAccount").name || crb.Subjects[0].Namespace != namespace {
		t.Errorf("binding %+v", crb)
	}
}

func TestRenderAllValues(t *testing.T) {
	objs := mustRender(t, `
clusterName: prod-eks
aws:
  region: us-west-2
  ec2Endpoint: http://ec2.local:4566
  sqsEndpoint: http://sqs.local:4566
interruption:
  queue: https://sqs.us-west-2.amazonaws.com/111122223333/prod-eks
  rebalanceDrain: true
temporal:
  address: prod.a1b2c.tmprl.cloud:7233
  namespace: prod.a1b2c
  tls: {enabled: true, clientCertSecret: temporal-client, caSecret: temporal-ca, serverName: prod.a1b2c.tmprl.cloud}
  apiKey: {secretName: temporal-cloud, secretKey: key}
image: {repository: example.com/joinery, tag: v9}
replicas: 3
logLevel: debug
devLogs: true
schedulerConfig: |
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
featureGates: NodeOverlay=true,SpotToSpotConsolidation=true
extraArgs: ["--something=1"]
metrics:
  port: 9090
  serviceMonitor: {enabled: true, labels: {release: kube-prometheus-stack}}
podDisruptionBudget: {minAvailable: 1}
nodeSelector: {role: system}
tolerations: [{key: CriticalAddonsOnly, operator: Exists}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: In, values: [system]}]}]}}}
serviceAccount: {name: jw, annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::111122223333:role/joinery"}}
`)
	typed(t, objs)
	d := deployment(t, objs)
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--temporal-address=prod.a1b2c.tmprl.cloud:7233",
		"--temporal-namespace=prod.a1b2c",
		"--cluster-name=prod-eks",
		"--region=us-west-2",
		"--metrics-addr=:9090",
		"--log-level=debug",
		"--leader-elect=true",
		"--ec2-endpoint=http://ec2.local:4566",
		"--sqs-endpoint=http://sqs.local:4566",
		"--interruption-queue=https://sqs.us-west-2.amazonaws.com/111122223333/prod-eks",
		"--interruption-rebalance-drain",
		"--scheduler-config=/etc/joinery/scheduler/config.yaml",
		"--feature-gates=NodeOverlay=true,SpotToSpotConsolidation=true",
		"--dev",
		"--something=1",
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", c.Args, wantArgs)
	}
	if c.Image != "example.com/joinery:v9" {
		t.Errorf("image %q", c.Image)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for k, v := range map[string]string{
		"AWS_REGION":               "us-west-2",
		"TEMPORAL_TLS_CERT":        "/etc/joinery/temporal-tls/tls.crt",
		"TEMPORAL_TLS_KEY":         "/etc/joinery/temporal-tls/tls.key",
		"TEMPORAL_TLS_CA":          "/etc/joinery/temporal-ca/ca.crt",
		"TEMPORAL_TLS_SERVER_NAME": "prod.a1b2c.tmprl.cloud",
	} {
		if env[k].Value != v {
			t.Errorf("env %s = %q, want %q", k, env[k].Value, v)
		}
	}
	if ref := env["TEMPORAL_API_KEY"].ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "temporal-cloud" || ref.SecretKeyRef.Key != "key" {
		t.Errorf("TEMPORAL_API_KEY %+v", env["TEMPORAL_API_KEY"])
	}
	secrets := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secrets[v.Name] = v.Secret.SecretName
		}
	}
	if secrets["temporal-tls"] != "temporal-client" || secrets["temporal-ca"] != "temporal-ca" {
		t.Errorf("secret volumes %v", secrets)
	}
	checkSchedulerConfig(t, objs, d)
	ps := d.Spec.Template.Spec
	if ps.NodeSelector["role"] != "system" || len(ps.Tolerations) != 1 || ps.Affinity.PodAntiAffinity != nil || ps.Affinity.NodeAffinity == nil {
		t.Errorf("scheduling: nodeSelector %v tolerations %v affinity %+v", ps.NodeSelector, ps.Tolerations, ps.Affinity)
	}
	if ps.ServiceAccountName != "jw" {
		t.Errorf("serviceAccountName %q", ps.ServiceAccountName)
	}
	var sa corev1.ServiceAccount
	strict(t, one(t, objs, "ServiceAccount"), &sa)
	if sa.Name != "jw" || sa.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("service account %+v", sa.ObjectMeta)
	}
	var pdb policyv1.PodDisruptionBudget
	strict(t, one(t, objs, "PodDisruptionBudget"), &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("pdb %+v", pdb.Spec)
	}

	var sm serviceMonitor
	strict(t, one(t, objs, "ServiceMonitor"), &sm)
	var svc corev1.Service
	strict(t, one(t, objs, "Service"), &svc)
	if sm.APIVersion != "monitoring.coreos.com/v1" || sm.Metadata.Labels["release"] != "kube-prometheus-stack" ||
		len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" ||
		!slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
		t.Errorf("service monitor %+v", sm)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("service monitor selector %v does not select the service (labels %v)", sm.Spec.Selector.MatchLabels, svc.Labels)
		}
	}
	if svc.Spec.Ports[0].Port != 9090 {
		t.Errorf("service port %d", svc.Spec.Ports[0].Port)
	}
}

func TestRenderToggles(t *testing.T) {
	objs := mustRender(t, minimal+`
metrics: {service: {enabled: false}}
podDisruptionBudget: {enabled: false}
rbac: {create: false}
serviceAccount: {create: false, name: existing}
`)
	typed(t, objs)
	for _, k := range []string{"Service", "ServiceMonitor", "PodDisruptionBudget", "ClusterRole", "ClusterRoleBinding", "ServiceAccount"} {
		if n := len(find(objs, k)); n != 0 {
			t.Errorf("%d %s rendered, want none", n, k)
		}
	}
	if d := deployment(t, objs); d.Spec.Template.Spec.ServiceAccountName != "existing" {
		t.Errorf("serviceAccountName %q", d.Spec.Template.Spec.ServiceAccountName)
	}
	// A ServiceMonitor needs the Service, whatever metrics.service says.
	objs = mustRender(t, minimal+`metrics: {service: {enabled: false}, serviceMonitor: {enabled: true}}`)
	if len(find(objs, "ServiceMonitor")) != 1 || len(find(objs, "Service")) != 1 {
		t.Errorf("serviceMonitor.enabled without service.enabled: want both rendered")
	}
}

func TestRenderRequiredValues(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		{`aws: {region: eu-west-1}`, "clusterName is required"},
		{`clusterName: x`, "aws.region is required"},
		{minimal + `temporal: {tls: {enabled: true}}`, "temporal.tls.clientCertSecret is required"},
		{minimal + `serviceAccount: {create: false}`, "serviceAccount.name is required"},
	} {
		_, err := render(t, c.values)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %q: error %v, want %q", c.values, err, c.want)
		}
	}
}

// TestArgsAreWorkerFlags checks that every flag the chart can pass is one
// worker/main.go defines (the worker exits on an unknown flag).
func TestArgsAreWorkerFlags(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "worker", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`flag\.\w+\("([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		defined[string(m[1])] = true
	}
	if len(defined) < 5 {
		t.Fatalf("found only %d flags in worker/main.go: %v", len(defined), defined)
	}
	objs := mustRender(t, `
clusterName: c
aws: {region: r, ec2Endpoint: e, sqsEndpoint: s}
interruption: {queue: q, rebalanceDrain: true}
devLogs: true
`)
	for _, a := range deployment(t, objs).Spec.Template.Spec.Containers[0].Args {
		name := strings.TrimPrefix(strings.SplitN(a, "=", 2)[0], "--")
		if !defined[name] {
			t.Errorf("chart passes %s, which worker/main.go does not define", a)
		}
	}
}

// TestChartCRDs checks the chart's crds/ folder holds exactly deploy/crds.
func TestChartCRDs(t *testing.T) {
	ch := loadChart(t)
	got := map[string][]byte{}
	for _, f := range ch.CRDObjects() {
		got[filepath.Base(f.Filename)] = f.File.Data
	}
	want, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "crds", "*.yaml"))
	if err != nil || len(want) == 0 {
		t.Fatalf("deploy/crds: %v %v", want, err)
	}
	if len(got) != len(want) {
		t.Errorf("chart has %d CRDs, deploy/crds %d", len(got), len(want))
	}
	for _, p := range want {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[filepath.Base(p)], b) {
			t.Errorf("crds/%s differs from deploy/crds (cp deploy/crds/*.yaml deploy/chart/joinery/crds/)", filepath.Base(p))
		}
	}
}

// checkSchedulerConfig: schedulerConfig becomes a ConfigMap mounted where
// --scheduler-config reads it, and a checksum that rolls the pods.
func checkSchedulerConfig(t *testing.T, objs []object, d *appsv1.Deployment) {
	t.Helper()
	var cm corev1.ConfigMap
	strict(t, one(t, objs, "ConfigMap"), &cm)
	want := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration"
	if cm.Name != "joinery-scheduler-config" || strings.TrimSpace(cm.Data["config.yaml"]) != want {
		t.Errorf("ConfigMap %s data %q, want config.yaml %q", cm.Name, cm.Data, want)
	}
	ps := d.Spec.Template.Spec
	mounted := false
	for _, v := range ps.Volumes {
		if v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
			continue
		}
		for _, m := range ps.Containers[0].VolumeMounts {
			mounted = mounted || (m.Name == v.Name && m.MountPath == "/etc/joinery/scheduler")
		}
	}
	if !mounted {
		t.Errorf("ConfigMap %s is not mounted at /etc/joinery/scheduler: volumes %+v", cm.Name, ps.Volumes)
	}
	if d.Spec.Template.Annotations["checksum/scheduler-config"] == "" {
		t.Errorf("pod annotations %v lack checksum/scheduler-config", d.Spec.Template.Annotations)
	}
}
