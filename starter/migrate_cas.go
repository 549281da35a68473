package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/starter/migrate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// casMigration is `starter migrate --from-cluster-autoscaler`: read-only.
type casMigration struct {
	cluster     string
	groupLabels []string
	output      string
}

// groupsCost is one node group's nodes at their list prices.
type groupCost struct {
	group *migrate.NodeGroup
	usd   float64
}

func (m casMigration) run(ctx context.Context, kc kubernetes.Interface, stdout, stderr io.Writer) error {
	cat, err := catalog.Default()
	if err != nil {
		return err
	}
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	ptrs := make([]*corev1.Node, len(nodes.Items))
	for i := range nodes.Items {
		ptrs[i] = &nodes.Items[i]
	}
	groups, ignored := migrate.NodeGroups(ptrs, m.groupLabels)
	for _, why := range ignored {
		fmt.Fprintln(stderr, "not a node group's:", why)
	}
	if len(groups) == 0 {
		return fmt.Errorf("no node of the cluster's %d belongs to a node group (labels %s)", len(nodes.Items), strings.Join(orDefault(m.groupLabels), ", "))
	}
	prop := migrate.Propose(groups, m.cluster)
	docs, pods, err := casDocs(ctx, kc, prop, groups)
	if err != nil {
		return err
	}
	built, errs := planner.Build(docs, planner.Options{Catalog: cat, Zones: groupZones(groups)})
	if len(errs) > 0 {
		return fmt.Errorf("the proposal does not build (a bug, please report it):\n%s", errs.Error())
	}
	res := planner.Solve(built.Input)
	costs := make([]groupCost, len(groups))
	var today float64
	var nodeCount int
	for i, g := range groups {
		costs[i] = groupCost{group: g, usd: nodesCost(cat, g.Nodes)}
		today += costs[i].usd
		nodeCount += len(g.Nodes)
	}
	out, err := migrate.Result{Objects: prop.Objects}.YAML()
	if m.output == "json" {
		out, err = migrate.Result{Objects: prop.Objects}.JSON()
	}
	if err != nil {
		return err
	}
	writeCASSummary(stderr, costs, today, nodeCount, pods, res)
	for _, n := range prop.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	for _, w := range built.Warnings {
		fmt.Fprintln(stderr, "note:", w)
	}
	_, err = stdout.Write(out)
	return err
}

func orDefault(labels []string) []string {
	if len(labels) == 0 {
		return migrate.GroupLabels
	}
	return labels
}

func writeCASSummary(w io.Writer, costs []groupCost, today float64, nodes, pods int, res planner.Result) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE GROUP\tNODES\tINSTANCE TYPES\tCAPACITY\tZONES\tUSD/HOUR")
	for _, c := range costs {
		g := c.group
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.4f\n", g.Name, len(g.Nodes), strings.Join(g.InstanceTypes, ","),
			strings.Join(g.CapacityTypes, ","), strings.Join(g.Zones, ","), c.usd)
	}
	tw.Flush()
	fmt.Fprintf(w, "today: %d nodes, %.4f USD/hour (list prices)\n", nodes, today)
	fmt.Fprintf(w, "Joinery's plan for the same %d pods: %d nodes, %.4f USD/hour (lower bound %.4f)", pods, len(res.Plan.NewNodeClaims), res.Price, res.LowerBound)
	if today > 0 {
		fmt.Fprintf(w, ", %+.1f%%", 100*(res.Price-today)/today)
	}
	fmt.Fprintln(w)
	for _, u := range res.Plan.Unschedulable {
		fmt.Fprintf(w, "unschedulable under the proposal: %s: %s\n", u.Pod, u.Reason)
	}
}

// nodesCost is the nodes' list price per hour: on-demand, or the spot
// estimate for spot nodes; a type the catalog lacks counts 0.
func nodesCost(cat *catalog.Catalog, nodes []*corev1.Node) float64 {
	var usd float64
	for _, n := range nodes {
		it, ok := cat.Get(n.Labels[apiv1.LabelInstanceType])
		if !ok {
			continue
		}
		usd += it.ListPrice(migrate.CapacityTypeOf(n))
	}
	return usd
}

func groupZones(groups []*migrate.NodeGroup) []string {
	var zs []string
	for _, g := range groups {
		for _, z := range g.Zones {
			if z != "" && !slices.Contains(zs, z) {
				zs = append(zs, z)
			}
		}
	}
	slices.Sort(zs)
	return zs
}

// casDocs is what the planner reads: the proposal, the pods the groups'
// nodes run (unbound: Joinery places them afresh; DaemonSet and mirror
// pods left out, the DaemonSets counted on every new node), and the
// namespaces and volumes they need. It returns how many pods it took.
func casDocs(ctx context.Context, kc kubernetes.Interface, prop migrate.Proposal, groups []*migrate.NodeGroup) ([]planner.Doc, int, error) {
	var docs []planner.Doc
	add := func(o map[string]interface{}) {
		docs = append(docs, planner.Doc{File: "cluster", Index: len(docs) + 1, Obj: &unstructured.Unstructured{Object: o}})
	}
	for _, o := range prop.Objects {
		add(o)
	}
	onGroup := map[string]bool{}
	for _, g := range groups {
		for _, n := range g.Nodes {
			onGroup[n.Name] = true
		}
	}
	pods, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("list pods: %w", err)
	}
	taken := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if !onGroup[p.Spec.NodeName] || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed ||
			ownedBy(p, "DaemonSet") || p.Annotations[corev1.MirrorPodAnnotationKey] != "" {
			continue
		}
		p = p.DeepCopy()
		p.Spec.NodeName = ""
		p.Status = corev1.PodStatus{}
		o, err := typedDoc(p, "v1", "Pod")
		if err != nil {
			return nil, 0, err
		}
		add(o)
		taken++
	}
	more, err := clusterObjects(ctx, kc)
	if err != nil {
		return nil, 0, err
	}
	for _, o := range more {
		add(o)
	}
	return docs, taken, nil
}

func ownedBy(p *corev1.Pod, kind string) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// clusterObjects are the DaemonSets, Namespaces and volume objects the plan
// of the pods depends on, as planner documents.
func clusterObjects(ctx context.Context, kc kubernetes.Interface) ([]map[string]interface{}, error) {
	opts := metav1.ListOptions{}
	var out []map[string]interface{}
	var errs []error
	take := func(docs []map[string]interface{}, err error) {
		out = append(out, docs...)
		errs = append(errs, err)
	}
	if l, err := kc.AppsV1().DaemonSets("").List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list DaemonSets: %w", err))
	} else {
		take(docsOf(l.Items, "apps/v1", "DaemonSet"))
	}
	if l, err := kc.CoreV1().Namespaces().List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list Namespaces: %w", err))
	} else {
		take(docsOf(l.Items, "v1", "Namespace"))
	}
	if l, err := kc.CoreV1().PersistentVolumeClaims("").List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list PersistentVolumeClaims: %w", err))
	} else {
		take(docsOf(l.Items, "v1", "PersistentVolumeClaim"))
	}
	if l, err := kc.CoreV1().PersistentVolumes().List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list PersistentVolumes: %w", err))
	} else {
		take(docsOf(l.Items, "v1", "PersistentVolume"))
	}
	if l, err := kc.StorageV1().StorageClasses().List(ctx, opts); err != nil {
		errs = append(errs, fmt.Errorf("list StorageClasses: %w", err))
	} else {
		take(docsOf(l.Items, "storage.k8s.io/v1", "StorageClass"))
	}
	return out, errors.Join(errs...)
}

// docsOf is typed list items as planner documents (a list's items carry
// no apiVersion and kind).
func docsOf[T any](items []T, apiVersion, kind string) ([]map[string]interface{}, error) {
	out := make([]map[string]interface{}, 0, len(items))
	for i := range items {
		o, err := typedDoc(&items[i], apiVersion, kind)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func typedDoc(obj interface{}, apiVersion, kind string) (map[string]interface{}, error) {
	o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	o["apiVersion"], o["kind"] = apiVersion, kind
	return o, nil
}
