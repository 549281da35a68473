//go:build integration

package integration

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	cellKey = "topology.example.io/cell"
	teamKey = "company.example.io/team"
)

// TestCustomKeyDomains (testdata/customdomain.yaml): a NodePool allowing
// three values of topology.example.io/cell and a Deployment of 6 pods
// spread over it (maxSkew 1, DoNotSchedule; two pods per node by size).
// Each NodeClaim is given one cell, the node registers with it and the
// pods run two per cell (without domains on the key they stay pending;
// without the per-claim value the nodes share one cell). A pool with team
// Exists labels the node of a pod selecting team=alpha with alpha, the
// NodeClaim launched for a pod selecting no team with a generated integer. Every Node carries every
// label of its NodeClaim (joinery.sh/provision-batch and
// karpenter.k8s.aws/ec2nodeclass included), as Karpenter's registration
// copies them.
func TestCustomKeyDomains(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	e.applyWithDefaultClass(t, "testdata/customdomain.yaml")
	waitFor(t, 5*time.Minute, "6 cells pods and 2 teams pods Running", func() bool {
		c, _ := e.readyPods("app=cells")
		m, _ := e.readyPods("teams=yes")
		return c == 6 && m == 2
	})
	perCell := map[string]int{}
	_, byNode := e.readyPods("app=cells")
	for node, n := range byNode {
		perCell[e.node(t, node).Labels[cellKey]] += n
	}
	t.Logf("cells pods per cell %v, per node %v", perCell, byNode)
	if len(perCell) != 3 || perCell["c1"] != 2 || perCell["c2"] != 2 || perCell["c3"] != 2 {
		t.Errorf("pods per cell %v (pods per node %v), want 2 in each of c1, c2, c3", perCell, byNode)
	}
	for _, name := range e.poolNodes(t, "cells") {
		if v := e.node(t, name).Labels[cellKey]; v != "c1" && v != "c2" && v != "c3" {
			t.Errorf("node %s of NodePool cells: %s=%q, want one of c1, c2, c3", name, cellKey, v)
		}
	}
	e.checkTeams(t)
	for _, pool := range []string{"cells", "teams"} {
		for _, nc := range e.poolClaims(t, pool) {
			e.checkClaimLabelsOnNode(t, nc)
		}
	}
}

// checkTeams: the alpha pod's node is labelled team=alpha, and the
// NodeClaim launched for the pod selecting no team carries a generated
// integer. Where the kube-scheduler binds that pod is its own choice: it
// may take the first Ready node, the alpha one, before its pointer lands.
func (e *env) checkTeams(t *testing.T) {
	t.Helper()
	_, byNode := e.readyPods("app=team-alpha")
	for node := range byNode {
		if v := e.node(t, node).Labels[teamKey]; v != "alpha" {
			t.Errorf("pod team-alpha's node %s: %s=%q, want alpha", node, teamKey, v)
		}
	}
	pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=team-none"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("team-none pods: %v (%v), want one", pods, err)
	}
	uid := string(pods.Items[0].UID)
	launched := 0
	for _, nc := range e.poolClaims(t, "teams") {
		if !slices.Contains(strings.Split(nc.Annotations[capacity.AnnotationNominatedPods], ","), uid) {
			continue
		}
		launched++
		v := nc.Labels[teamKey]
		t.Logf("nodeclaim %s launched for team-none: %s=%q", nc.Name, teamKey, v)
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			t.Errorf("nodeclaim %s launched for team-none: %s=%q, want a generated integer", nc.Name, teamKey, v)
		}
	}
	if launched == 0 {
		t.Errorf("no NodeClaim of pool teams was launched for team-none")
	}
}

// checkClaimLabelsOnNode: the NodeClaim's node carries each of its labels,
// the batch and node class labels among them.
func (e *env) checkClaimLabelsOnNode(t *testing.T, nc *apiv1.NodeClaim) {
	t.Helper()
	for _, k := range []string{activities.LabelProvisionBatch, "karpenter.k8s.aws/ec2nodeclass"} {
		if nc.Labels[k] == "" {
			t.Errorf("NodeClaim %s has no %s label", nc.Name, k)
		}
	}
	n := e.node(t, nc.Status.NodeName)
	for k, v := range nc.Labels {
		if got, ok := n.Labels[k]; !ok || got != v {
			t.Errorf("node %s: label %s=%q, want its NodeClaim %s's %q", n.Name, k, got, nc.Name, v)
		}
	}
}

func (e *env) node(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := e.kc.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node %q: %v", name, err)
	}
	return n
}
