package planner

import (
	"reflect"
	"sort"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// With a zone default (DoNotSchedule, maxSkew 1), a Deployment's three
// replicas select by its Service and its selector and get a node in each
// zone; a Job's pods, which nothing kube-scheduler reads selects, get none;
// a pod with its own constraints keeps them.
func TestBuildAppliesSpreadDefaults(t *testing.T) {
	y := `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web, tier: front}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 2
  template:
    metadata: {labels: {app: batch}}
    spec: {restartPolicy: Never, containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: own, labels: {app: web}}
spec:
  containers: [{name: c}]
  topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}]
`
	docs, errs := Parse("spread.yaml", []byte(y))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	zone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: apiv1.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule}
	b, errs := Build(docs, Options{SpreadDefaults: solver.SpreadDefaults{corev1.DefaultSchedulerName: {zone}}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	zone.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}}
	for _, p := range b.Input.Pods {
		var want []corev1.TopologySpreadConstraint
		switch p.Name {
		case "web-0", "web-1", "web-2":
			want = []corev1.TopologySpreadConstraint{zone}
		case "own":
			want = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		}
		if !reflect.DeepEqual(p.TopologySpread, want) {
			t.Errorf("%s: spread %+v, want %+v", p.Name, p.TopologySpread, want)
		}
	}
	r := Solve(b.Input)
	var webZones []string
	for _, nc := range r.Plan.NewNodeClaims {
		for _, key := range nc.Pods {
			if key == "default/web-0" || key == "default/web-1" || key == "default/web-2" {
				webZones = append(webZones, zoneOf(nc))
			}
		}
	}
	sort.Strings(webZones)
	if want := []string{"us-east-1a", "us-east-1b", "us-east-1c"}; !reflect.DeepEqual(webZones, want) {
		t.Errorf("web replicas in zones %v, want one in each of %v", webZones, want)
	}
}

func zoneOf(nc solver.NewNodeClaim) string {
	for _, r := range nc.Requirements {
		if r.Key == apiv1.LabelZone && len(r.Values) == 1 {
			return r.Values[0]
		}
	}
	return ""
}
