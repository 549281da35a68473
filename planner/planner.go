// Package planner turns ordinary Kubernetes manifests (NodePools,
// EC2NodeClasses, workloads, DaemonSets, Nodes with their pods, PVs and
// PVCs) into a solver.Input, without a cluster: the offline planner behind
// `starter plan`.
package planner

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/resources"
	"github.com/joinery/joinery/solver"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Doc is one YAML document of a manifest file.
type Doc struct {
	File  string
	Index int // 1-based document index in the file
	Obj   *unstructured.Unstructured
}

// ManifestError is a bad manifest: where, which field, why.
type ManifestError struct {
	File   string
	Doc    int
	Kind   string
	Name   string
	Field  string
	Reason string
}

func (e ManifestError) Error() string {
	loc := fmt.Sprintf("%s document %d", e.File, e.Doc)
	if e.Kind != "" {
		loc += " (" + e.Kind
		if e.Name != "" {
			loc += " " + e.Name
		}
		loc += ")"
	}
	if e.Field != "" {
		return loc + ": " + e.Field + ": " + e.Reason
	}
	return loc + ": " + e.Reason
}

// Errors is a list of manifest errors.
type Errors []ManifestError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// ReadFiles reads every document of every file.
func ReadFiles(paths ...string) ([]Doc, Errors) {
	var docs []Doc
	var errs Errors
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, ManifestError{File: p, Reason: err.Error()})
			continue
		}
		d, e := Parse(p, data)
		docs, errs = append(docs, d...), append(errs, e...)
	}
	return docs, errs
}

// Parse splits multi-document YAML (or JSON) into documents; empty
// documents are skipped, documents without kind or apiVersion are errors.
func Parse(file string, data []byte) ([]Doc, Errors) {
	var docs []Doc
	var errs Errors
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		raw, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, ManifestError{File: file, Doc: i, Reason: err.Error()})
			break
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		obj := map[string]interface{}{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			errs = append(errs, ManifestError{File: file, Doc: i, Reason: "invalid YAML: " + err.Error()})
			continue
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		kind, _, _ := unstructured.NestedString(obj, "kind")
		api, _, _ := unstructured.NestedString(obj, "apiVersion")
		if kind == "" || api == "" {
			errs = append(errs, ManifestError{File: file, Doc: i, Field: "kind/apiVersion", Reason: "missing"})
			continue
		}
		docs = append(docs, Doc{File: file, Index: i, Obj: u})
	}
	return docs, errs
}

// Options tune Build.
type Options struct {
	Catalog *catalog.Catalog // nil: the embedded catalog
	Zones   []string         // nil: catalog.DefaultZones
}

// MaxReplicas is the most pods one workload may expand to.
const MaxReplicas = 100000

// Built is the solver input made from manifests, with notes.
type Built struct {
	Input solver.Input
	// Warnings name documents that were ignored (kinds the planner does
	// not use) or approximated.
	Warnings []string
}

type workloadPod struct {
	pod  *corev1.Pod
	doc  Doc
	pvcs []string // claim names (namespace of the pod)
}

// Build converts documents into a solver input. Kinds used: NodePool,
// EC2NodeClass, Deployment, StatefulSet, ReplicaSet, Job, CronJob (one
// run), DaemonSet, Pod (with spec.nodeName: running on that Node; else
// pending), Node, PersistentVolume, PersistentVolumeClaim; others
// (PodDisruptionBudget, Service, ...) are accepted and ignored.
func Build(docs []Doc, opts Options) (*Built, Errors) {
	cat := opts.Catalog
	if cat == nil {
		var err error
		if cat, err = catalog.Default(); err != nil {
			return nil, Errors{{Reason: "embedded catalog: " + err.Error()}}
		}
	}
	zones := opts.Zones
	if zones == nil {
		zones = catalog.DefaultZones
	}
	out := &Built{}
	var errs Errors
	fail := func(d Doc, field, reason string) {
		errs = append(errs, ManifestError{File: d.File, Doc: d.Index, Kind: d.Obj.GetKind(), Name: d.Obj.GetName(), Field: field, Reason: reason})
	}
	convert := func(d Doc, into interface{}) bool {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Obj.Object, into, true); err != nil {
			fail(d, "", err.Error())
			return false
		}
		return true
	}
	var pools []*apiv1.NodePool
	classes := map[string]*apiv1.EC2NodeClass{}
	var pending, bound []workloadPod
	var nodes []*corev1.Node
	pvs := map[string]*corev1.PersistentVolume{}
	pvcs := map[string]*corev1.PersistentVolumeClaim{}
	expand := func(d Doc, name, ns string, n int, tmpl *corev1.PodTemplateSpec, claims []string, sts bool) {
		if ns == "" {
			ns = "default"
		}
		if n > MaxReplicas {
			fail(d, "spec.replicas", fmt.Sprintf("%d pods: more than the planner's limit of %d", n, MaxReplicas))
			return
		}
		for i := 0; i < n; i++ {
			p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
			p.Namespace, p.Name = ns, fmt.Sprintf("%s-%d", name, i)
			wp := workloadPod{pod: p, doc: d}
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					wp.pvcs = append(wp.pvcs, v.PersistentVolumeClaim.ClaimName)
				}
			}
			if sts {
				for _, c := range claims {
					wp.pvcs = append(wp.pvcs, fmt.Sprintf("%s-%s-%d", c, name, i))
				}
			}
			pending = append(pending, wp)
		}
	}
	replicas := func(r *int32) int {
		if r == nil {
			return 1
		}
		return int(*r)
	}
	for _, d := range docs {
		switch d.Obj.GetKind() {
		case "NodePool":
			np := &apiv1.NodePool{}
			if !convert(d, np) {
				continue
			}
			if fe := np.Validate(); len(fe) > 0 {
				for _, e := range fe {
					fail(d, e.Field, e.ErrorBody())
				}
				continue
			}
			pools = append(pools, np)
		case "EC2NodeClass":
			nc := &apiv1.EC2NodeClass{}
			if convert(d, nc) {
				classes[nc.Name] = nc
			}
		case "Deployment":
			o := &appsv1.Deployment{}
			if convert(d, o) {
				expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, nil, false)
			}
		case "ReplicaSet":
			o := &appsv1.ReplicaSet{}
			if convert(d, o) {
				expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, nil, false)
			}
		case "StatefulSet":
			o := &appsv1.StatefulSet{}
			if convert(d, o) {
				var claims []string
				for _, c := range o.Spec.VolumeClaimTemplates {
					claims = append(claims, c.Name)
				}
				expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, claims, true)
			}
		case "Job":
			o := &batchv1.Job{}
			if convert(d, o) {
				n := replicas(o.Spec.Parallelism)
				if o.Spec.Completions != nil && int(*o.Spec.Completions) < n {
					n = int(*o.Spec.Completions)
				}
				expand(d, o.Name, o.Namespace, n, &o.Spec.Template, nil, false)
			}
		case "CronJob":
			o := &batchv1.CronJob{}
			if convert(d, o) {
				js := o.Spec.JobTemplate.Spec
				n := replicas(js.Parallelism)
				expand(d, o.Name, o.Namespace, n, &js.Template, nil, false)
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s document %d: CronJob %s planned as one run", d.File, d.Index, o.Name))
			}
		case "DaemonSet":
			o := &appsv1.DaemonSet{}
			if convert(d, o) {
				if o.Namespace == "" {
					o.Namespace = "default"
				}
				out.Input.DaemonSets = append(out.Input.DaemonSets, solver.DaemonSetFromK8s(o))
			}
		case "Pod":
			o := &corev1.Pod{}
			if !convert(d, o) {
				continue
			}
			if o.Namespace == "" {
				o.Namespace = "default"
			}
			if len(o.Spec.Containers) == 0 {
				fail(d, "spec.containers", "Required value")
				continue
			}
			wp := workloadPod{pod: o, doc: d}
			for _, v := range o.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					wp.pvcs = append(wp.pvcs, v.PersistentVolumeClaim.ClaimName)
				}
			}
			if o.Spec.NodeName != "" {
				bound = append(bound, wp)
			} else {
				pending = append(pending, wp)
			}
		case "Node":
			o := &corev1.Node{}
			if convert(d, o) {
				nodes = append(nodes, o)
			}
		case "PersistentVolume":
			o := &corev1.PersistentVolume{}
			if convert(d, o) {
				pvs[o.Name] = o
			}
		case "PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			if convert(d, o) {
				if o.Namespace == "" {
					o.Namespace = "default"
				}
				pvcs[o.Namespace+"/"+o.Name] = o
			}
		default:
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s document %d: %s %s ignored", d.File, d.Index, d.Obj.GetKind(), d.Obj.GetName()))
		}
	}

	volumeReqs := func(wp workloadPod) []apiv1.NodeSelectorRequirementWithMinValues {
		var out []apiv1.NodeSelectorRequirementWithMinValues
		for _, c := range wp.pvcs {
			pvc := pvcs[wp.pod.Namespace+"/"+c]
			if pvc == nil || pvc.Spec.VolumeName == "" {
				continue // unbound: the volume follows the pod (WaitForFirstConsumer)
			}
			pv := pvs[pvc.Spec.VolumeName]
			if pv == nil || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil || len(pv.Spec.NodeAffinity.Required.NodeSelectorTerms) == 0 {
				continue
			}
			// The first term (EBS volumes have exactly one).
			for _, e := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions {
				out = append(out, apiv1.NodeSelectorRequirementWithMinValues{Key: e.Key, Operator: string(e.Operator), Values: append([]string(nil), e.Values...)})
			}
		}
		return out
	}

	// Existing nodes and their pods.
	nodeByName := map[string]*corev1.Node{}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	used := map[string]resources.List{}
	ports := map[string][]solver.HostPort{}
	for _, wp := range bound {
		sp := solver.PodFromK8s(wp.pod)
		used[wp.pod.Spec.NodeName] = used[wp.pod.Spec.NodeName].Add(sp.Requests)
		ports[wp.pod.Spec.NodeName] = append(ports[wp.pod.Spec.NodeName], sp.HostPorts...)
		zone := ""
		for _, n := range nodes {
			if n.Name == wp.pod.Spec.NodeName {
				zone = n.Labels[apiv1.LabelZone]
			}
		}
		out.Input.ExistingPods = append(out.Input.ExistingPods, solver.ExistingPod{Pod: sp, Node: wp.pod.Spec.NodeName, Zone: zone,
			Daemon: len(wp.pod.OwnerReferences) > 0 && wp.pod.OwnerReferences[0].Kind == "DaemonSet"})
	}
	usage := map[string]resources.List{}
	count := map[string]int{}
	for _, n := range nodes {
		nodeByName[n.Name] = n
		alloc, _ := resources.FromResourceList(n.Status.Allocatable)
		capacity, _ := resources.FromResourceList(n.Status.Capacity)
		price := 0.0
		if it, ok := cat.Get(n.Labels[apiv1.LabelInstanceType]); ok {
			price = it.OnDemandPrice
			if n.Labels[apiv1.LabelCapacityType] == apiv1.CapacityTypeSpot {
				price = it.SpotPrice()
			}
		}
		pool := n.Labels[apiv1.LabelNodePool]
		if pool != "" {
			usage[pool] = usage[pool].Add(capacity)
			count[pool]++
		}
		if n.Spec.Unschedulable {
			continue
		}
		out.Input.ExistingNodes = append(out.Input.ExistingNodes, solver.Node{Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints,
			Available: alloc.Sub(used[n.Name]), NodePool: pool, HostPorts: ports[n.Name], Price: price})
	}

	// NodePools over the catalog.
	sort.SliceStable(pools, func(i, j int) bool { return pools[i].Name < pools[j].Name })
	for _, np := range pools {
		var nc *apiv1.EC2NodeClass
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name != "" {
			nc = classes[ref.Name]
			if nc == nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("NodePool %s: EC2NodeClass %s not in the manifests; EKS defaults used", np.Name, ref.Name))
			}
		}
		sp := solver.NodePoolFromAPI(np, nc, cat, zones, nil)
		sp.Usage, sp.NodeCount = usage[np.Name], count[np.Name]
		out.Input.NodePools = append(out.Input.NodePools, sp)
	}
	for _, wp := range pending {
		sp := solver.PodFromK8s(wp.pod)
		sp.VolumeRequirements = volumeReqs(wp)
		out.Input.Pods = append(out.Input.Pods, sp)
	}
	return out, errs
}

// Result is a solved plan with its cost figures.
type Result struct {
	Plan       solver.Plan
	Price      float64 // USD/hour of the new nodes
	LowerBound float64 // USD/hour, solver.LowerBound
	Ratio      float64 // Price / LowerBound (0 when the bound is 0)
	SolveTime  time.Duration
}

// Solve plans the input and measures it.
func Solve(in solver.Input) Result {
	start := time.Now()
	plan := solver.Solve(in)
	r := Result{Plan: plan, SolveTime: time.Since(start)}
	r.Price = plan.Price()
	r.LowerBound = solver.LowerBound(in)
	if r.LowerBound > 0 {
		r.Ratio = r.Price / r.LowerBound
	}
	return r
}
