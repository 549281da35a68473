// Package planner turns ordinary Kubernetes manifests (NodePools,
// EC2NodeClasses, workloads, DaemonSets, Nodes with their pods, PVs, PVCs
// and StorageClasses) into a solver.Input, without a cluster: the offline planner behind
// `starter plan`.
package planner

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	Zones   []string         // nil: the catalog's zones (an exported catalog), else catalog.DefaultZones
	// SpreadDefaults are kube-scheduler's default topology spread
	// constraints (schedulerconfig.Load): pending pods without their own
	// get them, selecting by their workload and the Services of the
	// manifests. Nil: none.
	SpreadDefaults solver.SpreadDefaults
}

// MaxReplicas is the most pods one workload may expand to.
const MaxReplicas = 100000

// Built is the solver input made from manifests, with notes.
type Built struct {
	Input solver.Input
	// Warnings name documents that were ignored (kinds the planner does
	// not use) or approximated.
	Warnings []string
	// Overlays names the NodeOverlays whose prices and capacity the
	// pools carry, in the order they apply.
	Overlays []string
	// Static are the static NodePools (spec.replicas) with the nodes
	// they launch whatever the pods; SolveAll plans them.
	Static []StaticPool
}

type workloadPod struct {
	pod *corev1.Pod
	doc Doc
}

// Build converts documents into a solver input. Kinds used: NodePool,
// EC2NodeClass, Deployment, StatefulSet, ReplicaSet, Job, CronJob (one
// run), DaemonSet, Pod (with spec.nodeName: running on that Node; else
// pending), Node, PersistentVolume, PersistentVolumeClaim, StorageClass,
// CSINode (a Node's EBS attach limit; a Node without one has none),
// RuntimeClass (pending pods and DaemonSets naming one get what its
// admission plugin gives them: overhead, node selector, tolerations),
// NodeOverlay (prices and extended capacity, package overlay);
// others (PodDisruptionBudget, Service, ...) are accepted and ignored.
// Volumes are read by solver.VolumesOf, as the controller reads them: a
// StatefulSet's pods claim <template>-<set>-<ordinal> (made from the claim
// template when the manifests do not hold it, as the StatefulSet controller
// would), and a claim without storageClassName gets the default
// StorageClass (storageclass.kubernetes.io/is-default-class), as admission
// would give it. An object of an older Karpenter API version
// (karpenter.sh/v1beta1 ...) is an error naming the command that converts
// it (apiv1.OlderVersion).
func Build(docs []Doc, opts Options) (*Built, Errors) {
	b := &builder{cat: opts.Catalog, zones: opts.Zones, out: &Built{}, spread: opts.SpreadDefaults, selectors: newSelectorIndex(),
		classes: map[string]*apiv1.EC2NodeClass{}, pvs: map[string]*corev1.PersistentVolume{}, pvcs: map[string]*corev1.PersistentVolumeClaim{},
		storageClasses: map[string]*storagev1.StorageClass{}, csiNodes: map[string]*storagev1.CSINode{}, attached: solver.VolumeSet{},
		runtimeClasses: map[string]*nodev1.RuntimeClass{}}
	if b.cat == nil {
		var err error
		if b.cat, err = catalog.Default(); err != nil {
			return nil, Errors{{Reason: "embedded catalog: " + err.Error()}}
		}
	}
	// An exported catalog (starter catalog export) carries its region's
	// zones and zonal spot prices: plan with them.
	b.market = b.cat.Market()
	if b.zones == nil {
		b.zones = b.cat.Zones()
	}
	if b.zones == nil {
		b.zones = catalog.DefaultZones
	}
	for _, d := range docs {
		b.read(d)
	}
	b.defaultClaimClasses()
	b.daemonSetsInput()
	b.existingPods()
	usage, count := b.existingNodes()
	b.nodePools(usage, count)
	b.staticInputs(count)
	for _, wp := range b.pending {
		sp := b.pendingPod(wp.pod)
		b.spread.Apply(&sp, wp.pod, b.selectors.objects())
		b.out.Input.Pods = append(b.out.Input.Pods, sp)
	}
	return b.out, b.errs
}

// volumeObjects looks the manifests' claims, volumes and classes up.
func (b *builder) volumeObjects() solver.VolumeObjects {
	return solver.VolumeObjects{
		PVC:          func(ns, name string) *corev1.PersistentVolumeClaim { return b.pvcs[ns+"/"+name] },
		PV:           func(name string) *corev1.PersistentVolume { return b.pvs[name] },
		StorageClass: func(name string) *storagev1.StorageClass { return b.storageClasses[name] },
	}
}

// solverPod is the pod reduced for the solver, with its volumes (the EBS
// volumes not in seen counted, and added to it).
func (b *builder) solverPod(p *corev1.Pod, seen solver.VolumeSet) solver.Pod {
	return solver.PodWithVolumes(p, b.volumeObjects(), seen)
}

// defaultClaimClasses gives claims without storageClassName the default
// StorageClass (the DefaultStorageClass admission plugin; with several
// defaults, the newest, then the first by name).
func (b *builder) defaultClaimClasses() {
	var def *storagev1.StorageClass
	for _, sc := range b.storageClasses {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" && sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name) {
			def = sc
		}
	}
	if def == nil {
		return
	}
	for _, pvc := range b.pvcs {
		if pvc.Spec.StorageClassName == nil && pvc.Spec.VolumeName == "" {
			name := def.Name
			pvc.Spec.StorageClassName = &name
		}
	}
}

// builder holds what Build has read so far.
type builder struct {
	cat *catalog.Catalog
	// market: the catalog's zones and spot prices (nil: static offerings).
	market *catalog.Market
	zones  []string
	out    *Built
	errs   Errors

	pools          []*apiv1.NodePool
	classes        map[string]*apiv1.EC2NodeClass
	pending, bound []workloadPod
	nodes          []*corev1.Node
	pvs            map[string]*corev1.PersistentVolume
	pvcs           map[string]*corev1.PersistentVolumeClaim // by namespace/name
	storageClasses map[string]*storagev1.StorageClass
	csiNodes       map[string]*storagev1.CSINode
	runtimeClasses map[string]*nodev1.RuntimeClass
	overlays       []*v1alpha1.NodeOverlay
	daemonSets     []docDaemonSet
	spread         solver.SpreadDefaults
	selectors      *selectorIndex
	// attached are the EBS volumes of the bound pods: a pending pod that
	// shares one does not count it again.
	attached solver.VolumeSet
	// static are the static NodePools, planned apart (staticInputs).
	static []staticPending
}

func (b *builder) fail(d Doc, field, reason string) {
	b.errs = append(b.errs, ManifestError{File: d.File, Doc: d.Index, Kind: d.Obj.GetKind(), Name: d.Obj.GetName(), Field: field, Reason: reason})
}

// convert decodes the document into into, failing it when it does not fit.
func (b *builder) convert(d Doc, into interface{}) bool {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Obj.Object, into, true); err != nil {
		b.fail(d, "", err.Error())
		return false
	}
	return true
}

// valid fails the document with each of its validation errors; true when
// there are none.
func (b *builder) valid(d Doc, errs field.ErrorList) bool {
	for _, e := range errs {
		b.fail(d, e.Field, e.ErrorBody())
	}
	return len(errs) == 0
}

func (b *builder) warn(format string, args ...any) {
	b.out.Warnings = append(b.out.Warnings, fmt.Sprintf(format, args...))
}

// read takes one document by its kind.
func (b *builder) read(d Doc) {
	if advice, old := apiv1.OlderVersion(d.Obj.GetAPIVersion(), d.Obj.GetKind(), d.File); old {
		b.fail(d, "apiVersion", d.Obj.GetAPIVersion()+" "+d.Obj.GetKind()+" "+d.Obj.GetName()+": "+advice)
		return
	}
	switch d.Obj.GetKind() {
	case "NodePool":
		np := &apiv1.NodePool{}
		if b.convert(d, np) && b.valid(d, np.Validate()) {
			b.pools = append(b.pools, np)
		}
	case "EC2NodeClass":
		nc := &apiv1.EC2NodeClass{}
		if b.convert(d, nc) {
			b.classes[nc.Name] = nc
		}
	case "NodeOverlay":
		o := &v1alpha1.NodeOverlay{}
		if b.convert(d, o) && b.valid(d, o.Validate()) {
			b.overlays = append(b.overlays, o)
		}
	case "Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob":
		b.readWorkload(d)
	case "DaemonSet":
		o := &appsv1.DaemonSet{}
		if b.convert(d, o) {
			if o.Namespace == "" {
				o.Namespace = "default"
			}
			// Reduced once every RuntimeClass is read (daemonSets).
			b.daemonSets = append(b.daemonSets, docDaemonSet{ds: o, doc: d})
		}
	case "RuntimeClass":
		o := &nodev1.RuntimeClass{}
		if b.convert(d, o) {
			b.runtimeClasses[o.Name] = o
		}
	case "Pod":
		b.readPod(d)
	case "Namespace":
		if b.out.Input.NamespaceLabels == nil {
			b.out.Input.NamespaceLabels = map[string]map[string]string{}
		}
		l := maps.Clone(d.Obj.GetLabels())
		if l == nil {
			l = map[string]string{}
		}
		l[corev1.LabelMetadataName] = d.Obj.GetName() // as the API server sets it
		b.out.Input.NamespaceLabels[d.Obj.GetName()] = l
	case "Service":
		o := &corev1.Service{}
		if b.convert(d, o) {
			b.selectors.addService(o)
		}
	case "Node":
		o := &corev1.Node{}
		if b.convert(d, o) {
			b.nodes = append(b.nodes, o)
		}
	case "PersistentVolume":
		o := &corev1.PersistentVolume{}
		if b.convert(d, o) {
			b.pvs[o.Name] = o
		}
	case "PersistentVolumeClaim":
		o := &corev1.PersistentVolumeClaim{}
		if b.convert(d, o) {
			if o.Namespace == "" {
				o.Namespace = "default"
			}
			b.pvcs[o.Namespace+"/"+o.Name] = o
		}
	case "StorageClass":
		o := &storagev1.StorageClass{}
		if b.convert(d, o) {
			b.storageClasses[o.Name] = o
		}
	case "CSINode":
		o := &storagev1.CSINode{}
		if b.convert(d, o) {
			b.csiNodes[o.Name] = o
		}
	default:
		b.warn("%s document %d: %s %s ignored", d.File, d.Index, d.Obj.GetKind(), d.Obj.GetName())
	}
}

func replicas(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}

// readWorkload expands a Deployment, ReplicaSet, StatefulSet, Job or
// CronJob (one run) into its pending pods.
func (b *builder) readWorkload(d Doc) {
	switch d.Obj.GetKind() {
	case "Deployment":
		o := &appsv1.Deployment{}
		if b.convert(d, o) {
			from := len(b.pending)
			b.expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, nil, false)
			b.controlledBy(b.pending[from:], rsKind, o.Name, o.Spec.Selector)
		}
	case "ReplicaSet":
		o := &appsv1.ReplicaSet{}
		if b.convert(d, o) {
			from := len(b.pending)
			b.expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, nil, false)
			b.controlledBy(b.pending[from:], rsKind, o.Name, o.Spec.Selector)
		}
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		if b.convert(d, o) {
			from := len(b.pending)
			b.expand(d, o.Name, o.Namespace, replicas(o.Spec.Replicas), &o.Spec.Template, o.Spec.VolumeClaimTemplates, true)
			b.controlledBy(b.pending[from:], ssKind, o.Name, o.Spec.Selector)
		}
	case "Job":
		o := &batchv1.Job{}
		if b.convert(d, o) {
			n := replicas(o.Spec.Parallelism)
			if o.Spec.Completions != nil && int(*o.Spec.Completions) < n {
				n = int(*o.Spec.Completions)
			}
			from := len(b.pending)
			b.expand(d, o.Name, o.Namespace, n, &o.Spec.Template, nil, false)
			b.controlledBy(b.pending[from:], jobKind, o.Name, nil)
		}
	case "CronJob":
		o := &batchv1.CronJob{}
		if b.convert(d, o) {
			js := o.Spec.JobTemplate.Spec
			n := replicas(js.Parallelism)
			from := len(b.pending)
			b.expand(d, o.Name, o.Namespace, n, &js.Template, nil, false)
			b.controlledBy(b.pending[from:], jobKind, o.Name, nil)
			b.warn("%s document %d: CronJob %s planned as one run", d.File, d.Index, o.Name)
		}
	}
}

// expand adds n pending pods name-0.. of the template; a StatefulSet's
// (sts) also claim their volumeClaimTemplates' PVCs, as the StatefulSet
// controller makes them: a volume named after the template claims
// <template>-<set>-<ordinal>, a claim made from the template unless the
// manifests hold it.
func (b *builder) expand(d Doc, name, ns string, n int, tmpl *corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim, sts bool) {
	if ns == "" {
		ns = "default"
	}
	if n > MaxReplicas {
		b.fail(d, "spec.replicas", fmt.Sprintf("%d pods: more than the planner's limit of %d", n, MaxReplicas))
		return
	}
	for i := 0; i < n; i++ {
		p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		p.Namespace, p.Name = ns, fmt.Sprintf("%s-%d", name, i)
		if sts {
			for _, c := range claims {
				claim := fmt.Sprintf("%s-%s-%d", c.Name, name, i)
				if b.pvcs[ns+"/"+claim] == nil {
					pvc := &corev1.PersistentVolumeClaim{ObjectMeta: *c.ObjectMeta.DeepCopy(), Spec: *c.Spec.DeepCopy()}
					pvc.Namespace, pvc.Name = ns, claim
					b.pvcs[ns+"/"+claim] = pvc
				}
				setClaimVolume(p, c.Name, claim)
			}
		}
		b.pending = append(b.pending, workloadPod{pod: p, doc: d})
	}
}

// setClaimVolume makes the pod's volume vol claim claim (replacing a
// template volume of that name, else added).
func setClaimVolume(p *corev1.Pod, vol, claim string) {
	v := corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == vol {
			p.Spec.Volumes[i] = v
			return
		}
	}
	p.Spec.Volumes = append(p.Spec.Volumes, v)
}

// readPod takes a Pod: bound when it names a node, else pending.
func (b *builder) readPod(d Doc) {
	o := &corev1.Pod{}
	if !b.convert(d, o) {
		return
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if len(o.Spec.Containers) == 0 {
		b.fail(d, "spec.containers", "Required value")
		return
	}
	wp := workloadPod{pod: o, doc: d}
	if o.Spec.NodeName != "" {
		b.bound = append(b.bound, wp)
	} else {
		b.pending = append(b.pending, wp)
	}
}

// existingPods adds the bound pods (with their node's zone; each EBS
// volume counted once per node), nodes sorted by name first.
func (b *builder) existingPods() {
	sort.SliceStable(b.nodes, func(i, j int) bool { return b.nodes[i].Name < b.nodes[j].Name })
	onNode := map[string]solver.VolumeSet{}
	for _, wp := range b.bound {
		seen := onNode[wp.pod.Spec.NodeName]
		if seen == nil {
			seen = solver.VolumeSet{}
			onNode[wp.pod.Spec.NodeName] = seen
		}
		sp := b.solverPod(wp.pod, seen)
		for id := range seen {
			b.attached[id] = true
		}
		zone := ""
		for _, n := range b.nodes {
			if n.Name == wp.pod.Spec.NodeName {
				zone = n.Labels[apiv1.LabelZone]
			}
		}
		b.out.Input.ExistingPods = append(b.out.Input.ExistingPods, solver.ExistingPod{Pod: sp, Node: wp.pod.Spec.NodeName, Zone: zone,
			Daemon: len(wp.pod.OwnerReferences) > 0 && wp.pod.OwnerReferences[0].Kind == "DaemonSet"})
	}
}

// existingNodes adds the schedulable nodes with what their bound pods
// leave and their catalog price, and returns each NodePool's capacity
// in use and node count.
func (b *builder) existingNodes() (usage map[string]resources.List, count map[string]int) {
	used := map[string]resources.List{}
	ports := map[string][]solver.HostPort{}
	for _, ep := range b.out.Input.ExistingPods {
		used[ep.Node] = used[ep.Node].Add(ep.Pod.Requests)
		ports[ep.Node] = append(ports[ep.Node], ep.Pod.HostPorts...)
	}
	usage, count = map[string]resources.List{}, map[string]int{}
	for _, n := range b.nodes {
		alloc, _ := resources.FromResourceList(n.Status.Allocatable)
		alloc[resources.EBSVolumes] = solver.EBSLimit(b.csiNodes[n.Name])
		capacity, _ := resources.FromResourceList(n.Status.Capacity)
		price := 0.0
		if it, ok := b.cat.Get(n.Labels[apiv1.LabelInstanceType]); ok {
			price = it.ListPrice(n.Labels[apiv1.LabelCapacityType])
		}
		pool := n.Labels[apiv1.LabelNodePool]
		if pool != "" {
			usage[pool] = usage[pool].Add(capacity)
			count[pool]++
		}
		if n.Spec.Unschedulable {
			continue
		}
		b.out.Input.ExistingNodes = append(b.out.Input.ExistingNodes, solver.Node{Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints,
			Available: alloc.Sub(used[n.Name]), NodePool: pool, HostPorts: ports[n.Name], Price: price})
	}
	return usage, count
}

// nodePools adds the NodePools (by name) over the catalog, with their
// usage by the existing nodes.
func (b *builder) nodePools(usage map[string]resources.List, count map[string]int) {
	sort.SliceStable(b.pools, func(i, j int) bool { return b.pools[i].Name < b.pools[j].Name })
	for _, np := range b.pools {
		var nc *apiv1.EC2NodeClass
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name != "" {
			nc = b.classes[ref.Name]
			if nc == nil {
				b.warn("NodePool %s: EC2NodeClass %s not in the manifests; EKS defaults used", np.Name, ref.Name)
			}
		}
		if nc != nil {
			if why := nodeclass.Refused(nc); why != "" {
				b.warn("NodePool %s skipped: %s", np.Name, why)
				continue
			}
		}
		sp := solver.NodePoolFromMarket(np, nc, b.cat, b.market, b.zones, nil)
		if np.IsStatic() {
			// Static pools never provision for pods: their replicas are
			// planned apart (SolveAll).
			b.static = append(b.static, staticPending{np: np, sp: sp})
			continue
		}
		sp.Usage, sp.NodeCount = usage[np.Name], count[np.Name]
		b.out.Input.NodePools = append(b.out.Input.NodePools, sp)
	}
	b.applyOverlays()
}

// applyOverlays prices the pools' offerings after the NodeOverlays, as
// the controller does with --feature-gates NodeOverlay=true.
func (b *builder) applyOverlays() {
	if len(b.overlays) == 0 {
		b.costUsage(nil)
		return
	}
	all := slices.Clone(b.out.Input.NodePools)
	for _, st := range b.static {
		all = append(all, st.sp)
	}
	set := overlay.Resolve(b.overlays, all)
	set.Apply(all)
	n := copy(b.out.Input.NodePools, all)
	for i := range b.static {
		b.static[i].sp = all[n+i]
	}
	b.costUsage(set)
	b.out.Overlays = set.Active()
	for _, name := range slices.Sorted(maps.Keys(set.Rejected)) {
		v := set.Rejected[name]
		b.warn("NodeOverlay %s not applied (%s): %s", name, v.Reason, v.Message)
	}
	for _, u := range set.Unmodelled {
		b.warn("%s", u)
	}
}

// Result is a solved plan with its cost figures.
type Result struct {
	Plan       solver.Plan
	Price      float64 // USD/hour of the new nodes (static ones included)
	LowerBound float64 // USD/hour, solver.LowerBound
	Ratio      float64 // Price less StaticPrice, over LowerBound (0 when the bound is 0)
	SolveTime  time.Duration
	// Static are the static pools' nodes (SolveAll), StaticPrice their
	// USD/hour; StaticShort says which pools fall short of their replicas.
	Static      []StaticNode
	StaticPrice float64
	StaticShort []string
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
