package migrate

import (
	"fmt"
	"sort"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/preview/planner"
	"sigs.k8s.io/yaml"
)

// planned is what a plan of the example workloads comes to.
type planned struct {
	price float64
	nodes int
	// claims are "pool instance-type capacity-type zone pods", sorted.
	claims []string
}

// plan plans examples/workloads.yaml against the NodePools of docs with
// the whole (deterministic) search.
func plan(t *testing.T, docs []planner.Doc) planned {
	t.Helper()
	w, errs := planner.ReadFiles("../../examples/workloads.yaml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, errs := planner.Build(append(docs, w...), planner.Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(b.Input.NodePools) != 4 || len(b.Input.Pods) != 70 {
		t.Fatalf("%d pools, %d pods; want 4 and 70", len(b.Input.NodePools), len(b.Input.Pods))
	}
	b.Input.Budget = -1
	r := planner.Solve(b.Input)
	if len(r.Plan.Unschedulable) > 0 {
		t.Fatalf("unschedulable: %v", r.Plan.Unschedulable)
	}
	p := planned{price: r.Price, nodes: len(r.Plan.NewNodeClaims)}
	for i := range r.Plan.NewNodeClaims {
		nc := &r.Plan.NewNodeClaims[i]
		j := claimSummary(nc.NodePool, nc.InstanceTypes[0].Type.Name, len(nc.Pods))
		p.claims = append(p.claims, j)
	}
	sort.Strings(p.claims)
	return p
}

func claimSummary(pool, it string, pods int) string { return fmt.Sprintf("%s %s %d", pool, it, pods) }

// migrated converts v1beta1 files and reads the printed YAML back as
// `starter plan -f` would, checking every Karpenter object decodes
// strictly as Joinery's v1 types and every NodePool validates.
func migrated(t *testing.T, files ...string) []planner.Doc {
	t.Helper()
	r := Convert(read(t, files...))
	if len(r.Refusals) > 0 {
		t.Fatal(r.Refusals)
	}
	y, err := r.YAML()
	if err != nil {
		t.Fatal(err)
	}
	docs, errs := planner.Parse("migrated.yaml", y)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, d := range docs {
		raw, err := yaml.Marshal(d.Obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		switch d.Obj.GetKind() {
		case "NodePool":
			np := &apiv1.NodePool{}
			if err := yaml.UnmarshalStrict(raw, np); err != nil {
				t.Fatalf("NodePool %s: %v", d.Obj.GetName(), err)
			}
			if np.APIVersion != "karpenter.sh/v1" || np.Spec.Disruption.ConsolidateAfter == "" {
				t.Errorf("NodePool %s: apiVersion %s, consolidateAfter %q", np.Name, np.APIVersion, np.Spec.Disruption.ConsolidateAfter)
			}
			if errs := np.Validate(); len(errs) > 0 {
				t.Errorf("NodePool %s: %v", np.Name, errs)
			}
		case "EC2NodeClass":
			nc := &apiv1.EC2NodeClass{}
			if err := yaml.UnmarshalStrict(raw, nc); err != nil {
				t.Fatalf("EC2NodeClass %s: %v", d.Obj.GetName(), err)
			}
			if nc.APIVersion != "karpenter.k8s.aws/v1" || len(nc.Spec.AMISelectorTerms) == 0 {
				t.Errorf("EC2NodeClass %s: apiVersion %s, amiSelectorTerms %v", nc.Name, nc.APIVersion, nc.Spec.AMISelectorTerms)
			}
		}
	}
	return docs
}

func handWritten(t *testing.T, file string) []planner.Doc {
	t.Helper()
	docs, errs := planner.ReadFiles(file)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return docs
}

// TestRoundTripPlansAsHandWrittenV1: the v1beta1 rendering of the example
// NodePools, migrated, plans the example workloads exactly as the
// hand-written v1 examples do: the same USD/hour, node count, and node by
// node the same pool, instance type and pod count.
func TestRoundTripPlansAsHandWrittenV1(t *testing.T) {
	got := plan(t, migrated(t, "testdata/roundtrip/examples-v1beta1.yaml"))
	want := plan(t, handWritten(t, "../../examples/nodepools.yaml"))
	if got.price != want.price || got.nodes != want.nodes || fmt.Sprint(got.claims) != fmt.Sprint(want.claims) {
		t.Fatalf("migrated: %.4f USD/hour, %d nodes %v\nhand-written v1: %.4f USD/hour, %d nodes %v", got.price, got.nodes, got.claims, want.price, want.nodes, want.claims)
	}
	t.Logf("%.4f USD/hour, %d nodes", got.price, got.nodes)
}

// TestRoundTripKubeletPlansAsHandWrittenV1: kubelet settings on one of
// the NodePools sharing a class move to a copy of the class, and the
// result plans as a hand-written v1 with its own class for them; the
// settings count (maxPods 8 takes more nodes than the defaults).
func TestRoundTripKubeletPlansAsHandWrittenV1(t *testing.T) {
	docs := migrated(t, "testdata/roundtrip/kubelet-v1beta1.yaml")
	got := plan(t, docs)
	want := plan(t, handWritten(t, "testdata/roundtrip/kubelet-v1.yaml"))
	if got.price != want.price || got.nodes != want.nodes || fmt.Sprint(got.claims) != fmt.Sprint(want.claims) {
		t.Fatalf("migrated: %.4f USD/hour, %d nodes %v\nhand-written v1: %.4f USD/hour, %d nodes %v", got.price, got.nodes, got.claims, want.price, want.nodes, want.claims)
	}
	plain := plan(t, handWritten(t, "../../examples/nodepools.yaml"))
	if got.nodes <= plain.nodes {
		t.Errorf("maxPods 8: %d nodes, defaults %d: the kubelet settings did not reach the plan", got.nodes, plain.nodes)
	}
	var classes []string
	for _, d := range docs {
		if d.Obj.GetKind() == "EC2NodeClass" {
			classes = append(classes, d.Obj.GetName())
		}
	}
	if fmt.Sprint(classes) != "[default default-general-purpose]" {
		t.Errorf("classes %v", classes)
	}
	t.Logf("%.4f USD/hour, %d nodes (defaults: %.4f USD/hour, %d nodes)", got.price, got.nodes, plain.price, plain.nodes)
}
