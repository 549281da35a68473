package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/workflows"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

// NodeExplanation is what `starter explain node` reports about one node.
type NodeExplanation struct {
	Node            string  `json:"node,omitempty"`
	NodeClaim       string  `json:"nodeClaim,omitempty"`
	NodePool        string  `json:"nodePool,omitempty"`
	InstanceType    string  `json:"instanceType,omitempty"`
	CapacityType    string  `json:"capacityType,omitempty"`
	Zone            string  `json:"zone,omitempty"`
	PriceUSDPerHour float64 `json:"priceUsdPerHour"`
	// Candidate: "yes" (voluntary disruption may take it), "no" (candidate
	// filtering drops it: Reasons say why) or "unknown" (the last pass's
	// bounded list does not say, or no pass ran yet).
	Candidate string `json:"candidate"`
	// Reasons are every reason the last consolidation pass gave for not
	// disrupting the node.
	Reasons []saga.BlockReason `json:"reasons,omitempty"`
	// LastPass is the last pass's time and outcome.
	LastPass string `json:"lastPass,omitempty"`
	// Decisions are the recent decisions naming the node, oldest first.
	Decisions []string `json:"decisions,omitempty"`
	// Events are Joinery's Events on the Node and its NodeClaim, oldest first.
	Events []string `json:"events,omitempty"`
	// Status says why the Consolidation workflow could not be asked.
	Status string `json:"status,omitempty"`
}

func runExplainNode(ctx context.Context, kubeconfig string, tf temporalFlags, name, output string) error {
	ex, err := explainNode(ctx, kubeconfig, name)
	if err != nil {
		return err
	}
	if c, err := tf.dial(); err != nil {
		ex.Status = err.Error()
	} else {
		defer c.Close()
		v, err := c.QueryWorkflow(ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		var st workflows.ConsolidationStatus
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil {
			ex.Status = fmt.Sprintf("query %s: %v", workflows.ConsolidationWorkflowID, err)
		} else {
			ex.fromStatus(st)
		}
	}
	if ex.Candidate == "" {
		ex.Candidate = "unknown"
	}
	if output == "json" {
		return json.NewEncoder(os.Stdout).Encode(ex)
	}
	ex.print()
	return nil
}

// explainNode reads the node (or, by that name, a NodeClaim without one),
// its NodeClaim, price and Joinery's Events on both.
func explainNode(ctx context.Context, kubeconfig, name string) (*NodeExplanation, error) {
	kc, dc, err := kubeClients(kubeconfig)
	if err != nil {
		return nil, err
	}
	ex := &NodeExplanation{}
	node, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		ex.Node = node.Name
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	nc, err := findNodeClaim(ctx, dc, name)
	if err != nil {
		return nil, err
	}
	if node == nil && nc == nil {
		return nil, fmt.Errorf("no Node and no NodeClaim named %s", name)
	}
	labels := map[string]string{}
	if nc != nil {
		ex.NodeClaim = nc.Name
		labels = nc.Labels
		if ex.Node == "" && nc.Status.NodeName != "" {
			if n, err := kc.CoreV1().Nodes().Get(ctx, nc.Status.NodeName, metav1.GetOptions{}); err == nil {
				node, ex.Node = n, n.Name
			}
		}
	}
	if node != nil {
		labels = node.Labels
	}
	ex.NodePool, ex.InstanceType = labels[apiv1.LabelNodePool], labels[apiv1.LabelInstanceType]
	ex.CapacityType, ex.Zone = labels[apiv1.LabelCapacityType], labels[apiv1.LabelZone]
	if cat, err := catalog.Default(); err == nil {
		if it, ok := cat.Get(ex.InstanceType); ok {
			ex.PriceUSDPerHour = it.ListPrice(ex.CapacityType)
		}
	}
	// Events on cluster-scoped objects are in the default namespace.
	type ev struct {
		at   time.Time
		text string
	}
	var evs []ev
	for _, obj := range []string{ex.Node, ex.NodeClaim} {
		if obj == "" {
			continue
		}
		list, err := kc.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + obj})
		if err != nil {
			continue
		}
		for _, e := range list.Items {
			if e.Source.Component != "joinery" {
				continue
			}
			at := e.LastTimestamp.Time
			if at.IsZero() {
				at = e.EventTime.Time
			}
			evs = append(evs, ev{at, fmt.Sprintf("%s %s %s: %s%s", at.UTC().Format(time.RFC3339), e.InvolvedObject.Kind, e.Reason, e.Message, times(e))})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	for _, e := range evs {
		ex.Events = append(ex.Events, e.text)
	}
	return ex, nil
}

func times(e corev1.Event) string {
	if e.Count > 1 {
		return fmt.Sprintf(" (x%d)", e.Count)
	}
	return ""
}

// findNodeClaim finds the NodeClaim named name or whose status.nodeName is name.
func findNodeClaim(ctx context.Context, dc dynamic.Interface, name string) (*apiv1.NodeClaim, error) {
	list, err := dc.Resource(apiv1.NodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list NodeClaims: %w", err)
	}
	for _, u := range list.Items {
		nc := &apiv1.NodeClaim{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc) != nil {
			continue
		}
		if nc.Name == name || nc.Status.NodeName == name {
			return nc, nil
		}
	}
	return nil, nil
}

// fromStatus fills what the Consolidation workflow's last pass and history
// say about the node.
func (ex *NodeExplanation) fromStatus(st workflows.ConsolidationStatus) {
	for _, r := range st.History {
		for _, n := range r.Decision.Nodes {
			if n == ex.Node && n != "" {
				ex.Decisions = append(ex.Decisions, fmt.Sprintf("%s %s %s -> %s (%s)", r.At.UTC().Format(time.RFC3339),
					r.Decision.Method, strings.Join(r.Decision.Nodes, ","), r.Outcome, r.Decision.Why))
			}
		}
	}
	lp := st.LastPass
	if lp == nil {
		ex.Candidate = "unknown"
		return
	}
	ex.LastPass = fmt.Sprintf("%s: %s", lp.At.UTC().Format(time.RFC3339), lp.Why)
	for _, b := range lp.Nodes {
		if (ex.Node != "" && b.Node == ex.Node) || (ex.NodeClaim != "" && b.NodeClaim == ex.NodeClaim) {
			ex.Reasons = b.Reasons
		}
	}
	switch {
	case len(ex.Reasons) > 0:
		ex.Candidate = "yes"
		for _, r := range ex.Reasons {
			if disruption.BlockKind(r.Reason).Filtering() {
				ex.Candidate = "no"
			}
		}
	case lp.Total <= len(lp.Nodes) && !strings.HasPrefix(lp.Why, "not quiet"):
		ex.Candidate = "yes" // the list is complete and does not name it
	default:
		ex.Candidate = "unknown"
	}
}

func (ex *NodeExplanation) print() {
	name := ex.Node
	if name == "" {
		name = "(no node yet)"
	}
	fmt.Printf("node %s: NodeClaim %s, NodePool %s\n", name, orDash(ex.NodeClaim), orDash(ex.NodePool))
	fmt.Printf("  %s %s %s, %.4f USD/hour\n", orDash(ex.InstanceType), orDash(ex.CapacityType), orDash(ex.Zone), ex.PriceUSDPerHour)
	fmt.Printf("candidate: %s\n", ex.Candidate)
	if ex.LastPass != "" {
		fmt.Printf("last pass: %s\n", ex.LastPass)
	}
	if ex.Status != "" {
		fmt.Printf("consolidation status unavailable: %s\n", ex.Status)
	}
	if len(ex.Reasons) > 0 {
		fmt.Println("not disrupted because:")
		for _, r := range ex.Reasons {
			fmt.Printf("  %-22s %s\n", r.Reason, r.Message)
		}
	} else if ex.Candidate == "yes" {
		fmt.Println("not blocked: the last pass had nothing against it (a candidate consolidation did not take)")
	}
	for _, d := range ex.Decisions {
		fmt.Printf("decision: %s\n", d)
	}
	if len(ex.Events) > 0 {
		fmt.Println("events:")
		for _, e := range ex.Events {
			fmt.Printf("  %s\n", e)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
