package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
)

// Pods the manifests would create get what RuntimeClass admission gives
// them, whatever the documents' order: a Deployment's pods naming kata
// (defined after them) carry its overhead, node selector and toleration,
// and so does the DaemonSet's template; a pod naming a class the
// manifests lack is refused, and a DaemonSet naming one reserves nothing
// (with a warning). A bound pod is left as it is (already admitted).
func TestBuildAdmitsRuntimeClasses(t *testing.T) {
	y := `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {runtimeClassName: kata, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: lost-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: lost}}
  template:
    metadata: {labels: {app: lost}}
    spec: {runtimeClassName: gvisor, containers: [{name: c, resources: {requests: {cpu: 1}}}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sandboxed}
spec:
  replicas: 2
  selector: {matchLabels: {app: sandboxed}}
  template:
    metadata: {labels: {app: sandboxed}}
    spec: {runtimeClassName: kata, containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lost}
spec: {runtimeClassName: gvisor, containers: [{name: c, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: running}
spec: {nodeName: ip-10-0-0-1.ec2.internal, runtimeClassName: gvisor, containers: [{name: c}]}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 160Mi}}
scheduling:
  nodeSelector: {sandbox: kata}
  tolerations: [{key: sandbox, operator: Equal, value: kata, effect: NoSchedule}]
`
	b := mustBuild(t, "rc.yaml", y)
	got := map[string]solver.Pod{}
	for _, p := range b.Input.Pods {
		got[p.Name] = p
	}
	want := resources.List{resources.CPU: 1250, resources.Memory: 1<<30 + 160<<20, resources.Pods: 1}
	for _, name := range []string{"sandboxed-0", "sandboxed-1"} {
		p := got[name]
		if p.Requests != want || p.Refused != "" || !reflect.DeepEqual(p.NodeSelector, map[string]string{"sandbox": "kata"}) ||
			len(p.Tolerations) != 1 || p.Tolerations[0].Key != "sandbox" {
			t.Errorf("%s: requests %s, selector %v, tolerations %v, refused %q; want %s and kata's scheduling", name, p.Requests, p.NodeSelector, p.Tolerations, p.Refused, want)
		}
	}
	if r := got["lost"].Refused; r != `the RuntimeClass admission plugin rejects the pod: RuntimeClass "gvisor" (spec.runtimeClassName) not found` {
		t.Errorf("lost: refused %q", r)
	}
	if ep := b.Input.ExistingPods; len(ep) != 1 || ep[0].Pod.Name != "running" || ep[0].Pod.Refused != "" {
		t.Errorf("existing pods %+v: want running, not refused", ep)
	}
	if len(b.Input.DaemonSets) != 1 || b.Input.DaemonSets[0].Name != "agent" {
		t.Fatalf("DaemonSets %+v, want agent only", b.Input.DaemonSets)
	}
	if r := b.Input.DaemonSets[0].Pod.Requests; r != (resources.List{resources.CPU: 350, resources.Memory: 224 << 20, resources.Pods: 1}) {
		t.Errorf("agent requests %s, want 100m+250m cpu, 64Mi+160Mi", r)
	}
	if w := strings.Join(b.Warnings, "\n"); !strings.Contains(w, `rc.yaml document 2: DaemonSet lost-agent reserves nothing on new nodes: the RuntimeClass admission plugin rejects the pod: RuntimeClass "gvisor"`) {
		t.Errorf("warnings %q lack lost-agent's", w)
	}
}
