//go:build integration

package integration

import (
	"sort"
	"testing"
	"time"

	"github.com/joinery/joinery/activities"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSpreadOverANodePoolsCustomKey: a NodePool allowing three values of
// topology.example.io/cell and a Deployment of 3 pods spread over it
// (maxSkew 1, DoNotSchedule; one pod per node by size). Each NodeClaim is
// given one cell, the plan a distinct one per pod, the node registers with
// it, and every pod runs: three nodes in three distinct cells (without
// domains on the key the pods stay pending; without the per-claim pin the
// three nodes share one cell). Each Node carries
// every label of its NodeClaim (registration copies them all, as
// Karpenter's does, joinery.sh/provision-batch included).
func TestSpreadOverANodePoolsCustomKey(t *testing.T) {
	parallel(t)
	e := startEnv(t)
	e.applyWithDefaultClass(t, "testdata/cells.yaml")
	waitFor(t, 4*time.Minute, "3 cells pods Running", func() bool { n, _ := e.readyPods("app=cells"); return n == 3 })
	_, byNode := e.readyPods("app=cells")
	cells := map[string]string{}
	for node := range byNode {
		n, err := e.kc.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cells[node] = n.Labels["topology.example.io/cell"]
	}
	var got []string
	for _, c := range cells {
		got = append(got, c)
	}
	sort.Strings(got)
	if len(got) != 3 || got[0] != "c1" || got[1] != "c2" || got[2] != "c3" {
		t.Errorf("pods' nodes and their cells %v (pods per node %v), want three nodes in c1, c2 and c3", cells, byNode)
	}
	if nodes := e.poolNodes(t, "cells"); len(nodes) != 3 {
		t.Errorf("NodePool cells has nodes %v, want 3", nodes)
	}
	claims := e.poolClaims(t, "cells")
	if len(claims) != 3 {
		t.Fatalf("NodePool cells has %d launched NodeClaims, want 3", len(claims))
	}
	for _, nc := range claims {
		if nc.Labels[activities.LabelProvisionBatch] == "" {
			t.Errorf("NodeClaim %s has no %s label", nc.Name, activities.LabelProvisionBatch)
		}
		n, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("NodeClaim %s's node %q: %v", nc.Name, nc.Status.NodeName, err)
		}
		for k, v := range nc.Labels {
			if got, ok := n.Labels[k]; !ok || got != v {
				t.Errorf("node %s: label %s=%q, want its NodeClaim %s's %q", n.Name, k, got, nc.Name, v)
			}
		}
	}
}
