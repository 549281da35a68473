package migrate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/joinery/joinery/preview/planner"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden, *.changes and *.refused from the results")

// read parses manifest files as `starter migrate` does.
func read(t *testing.T, files ...string) []Input {
	t.Helper()
	docs, errs := planner.ReadFiles(files...)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	in := make([]Input, len(docs))
	for i, d := range docs {
		in[i] = Input{File: d.File, Doc: d.Index, Object: d.Obj.Object}
	}
	return in
}

func lines(r Result) string {
	var b strings.Builder
	for _, c := range r.Changes {
		b.WriteString(c.String() + "\n")
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	return b.String()
}

// TestGolden converts each testdata/NAME.yaml and compares: the YAML with
// NAME.golden and the change lines and notes with NAME.changes, or, when
// something is refused, the refusals with NAME.refused (and no .golden).
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(inputs) < 7 {
		t.Fatalf("%d inputs, %v", len(inputs), err)
	}
	for _, path := range inputs {
		base := strings.TrimSuffix(path, ".yaml")
		t.Run(filepath.Base(base), func(t *testing.T) {
			r := Convert(read(t, path))
			want := map[string]string{}
			if len(r.Refusals) > 0 {
				var b strings.Builder
				for _, x := range r.Refusals {
					b.WriteString(x.Error() + "\n")
				}
				want[".refused"] = b.String()
			} else {
				y, err := r.YAML()
				if err != nil {
					t.Fatal(err)
				}
				want[".golden"], want[".changes"] = string(y), lines(r)
			}
			for _, ext := range []string{".golden", ".changes", ".refused"} {
				got, ok := want[ext]
				if *update {
					if ok {
						if err := os.WriteFile(base+ext, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
					} else {
						os.Remove(base + ext)
					}
					continue
				}
				file, err := os.ReadFile(base + ext)
				switch {
				case !ok && err == nil:
					t.Errorf("%s%s exists, but the result has none", base, ext)
				case ok && err != nil:
					t.Errorf("%s%s: %v; the result is:\n%s", base, ext, err, got)
				case ok && string(file) != got:
					t.Errorf("%s%s differs; the result is:\n%s", base, ext, got)
				}
			}
		})
	}
}

// TestV1PassesThrough: the examples, Karpenter v1 manifests, come out
// exactly as they went in, with no change.
func TestV1PassesThrough(t *testing.T) {
	for _, files := range [][]string{{"../../examples/nodepools.yaml", "../../examples/workloads.yaml"}, {"testdata/v1-passthrough.yaml"}} {
		in := read(t, files...)
		r := Convert(in)
		if len(r.Refusals) > 0 || len(r.Changes) > 0 || len(r.Notes) > 0 {
			t.Fatalf("%v: refusals %v, changes %v, notes %v", files, r.Refusals, r.Changes, r.Notes)
		}
		if len(r.Objects) != len(in) {
			t.Fatalf("%v: %d objects out of %d", files, len(r.Objects), len(in))
		}
		for i := range in {
			if !reflect.DeepEqual(r.Objects[i], in[i].Object) {
				t.Errorf("%v: object %d changed:\n%v\nwas\n%v", files, i, r.Objects[i], in[i].Object)
			}
		}
	}
}

// TestInputNotModified: Convert works on copies.
func TestInputNotModified(t *testing.T) {
	in := read(t, "testdata/guide.yaml", "testdata/kubectl-get-v1.yaml")
	before := read(t, "testdata/guide.yaml", "testdata/kubectl-get-v1.yaml")
	r := Convert(in)
	if len(r.Refusals) > 0 {
		t.Fatal(r.Refusals)
	}
	for i := range in {
		if !reflect.DeepEqual(in[i].Object, before[i].Object) {
			t.Errorf("input %d modified", i)
		}
	}
}

func TestChangeString(t *testing.T) {
	for _, c := range []struct {
		c    Change
		want string
	}{
		{Change{Object: "NodePool a", Field: "spec.x", Old: "1", New: "2"}, "NodePool a: spec.x: 1 -> 2"},
		{Change{Object: "NodePool a", Field: "spec.x", Old: "1", New: "2", Why: "w"}, "NodePool a: spec.x: 1 -> 2 (w)"},
		{Change{Object: "NodePool a", Field: "spec.x", Old: "1", To: "spec.y"}, "NodePool a: spec.x: 1 -> spec.y"},
		{Change{Object: "NodePool a", Field: "spec.x", Old: "1", To: "spec.y", New: "[2]"}, "NodePool a: spec.x: 1 -> spec.y: [2]"},
		{Change{Object: "EC2NodeClass b", Why: "new"}, "EC2NodeClass b: new"},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

func TestJSONIsAList(t *testing.T) {
	r := Convert(read(t, "testdata/guide.yaml"))
	j, err := r.JSON()
	if err != nil || !bytes.HasPrefix(j, []byte("{\n  \"apiVersion\": \"v1\",\n  \"items\": [")) || !bytes.Contains(j, []byte(`"kind": "List"`)) {
		t.Fatalf("%v\n%s", err, j)
	}
}

// TestMalformedInputIsRefusedByField: wrong shapes are refusals naming
// the object and field, never a panic or a silent pass.
func TestMalformedInputIsRefusedByField(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: x\n", "NodePool: metadata.name: required"},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\n", "NodePool a: spec.template.spec.nodeClassRef: required"},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}, kubelet: {maxPods: many}}}}\n", "NodePool a: spec.template.spec.kubelet.maxPods: a string, not an integer"},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}}}, disruption: {consolidationPolicy: WhenEmptyOrUnderutilized}}\n",
			`NodePool a: spec.disruption.consolidationPolicy: "WhenEmptyOrUnderutilized" is not a v1beta1 policy (WhenEmpty, WhenUnderutilized)`},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}, requirements: [{key: k, operator: Gt, values: [x, \"y\"]}]}}}\n",
			"NodePool a: spec.template.spec.requirements[0]"},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}, requirements: [{key: k, operator: In, values: [x, y]}]}}}\n",
			"NodePool a: spec.template.spec.requirements.values: a bool, not a string"},
		{"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}}}, disruption: {budgets: [{nodes: 1, reasons: [Empty]}]}}\n",
			"NodePool a: spec.disruption.budgets[0].reasons: a v1 field, not a karpenter.sh/v1beta1 one"},
		{"apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {amiFamily: 7}\n", "EC2NodeClass c: "},
		{"apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {amiFamily: AL2, kubelet: {maxPods: 3}}\n", "EC2NodeClass c: spec.kubelet: a v1 field"},
		{"apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {amiFamily: Windows2022, role: r}\nmetadata: {name: c, annotations: {compatibility.karpenter.k8s.aws/v1-alias-version: v2}}\n",
			"EC2NodeClass c: metadata.annotations[compatibility.karpenter.k8s.aws/v1-alias-version]: \"v2\": a Windows alias takes only the version latest in v1"},
		{"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{\"maxPod\":1}'}}\nspec: {template: {spec: {nodeClassRef: {name: d}}}}\n",
			"NodePool a: metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]: not v1beta1 kubelet settings"},
		{"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {name: d}, kubelet: {maxPods: 3}}}}\n",
			"NodePool a: spec.template.spec.kubelet: not a field of karpenter.sh/v1 NodePool"},
		{"apiVersion: karpenter.sh/v2\nkind: NodePool\nmetadata: {name: a}\n", "karpenter.sh/v2 NodePool a: apiVersion: not a Karpenter kind and version this command converts"},
	} {
		docs, errs := planner.Parse("m.yaml", []byte(c.yaml))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		in := []Input{{File: "m.yaml", Doc: 1, Object: docs[0].Obj.Object}}
		r := Convert(in)
		if len(r.Refusals) == 0 || !strings.Contains(r.Refusals[0].Error(), c.want) {
			t.Errorf("%s: refusals %v, want one containing %q", c.yaml, r.Refusals, c.want)
		}
	}
}
