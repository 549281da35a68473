package solver

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// clusterOf turns a plan of in into a running cluster: each new NodeClaim
// becomes an existing node of its cheapest type and offering holding its
// pods but every gone-th (so that some nodes' pods fit elsewhere; 0 keeps
// all) plus one DaemonSet pod, priced at that offering.
func clusterOf(in Input, plan Plan, gone int) Input {
	out := Input{NodePools: in.NodePools, DaemonSets: in.DaemonSets}
	byKey := map[string]Pod{}
	for _, p := range in.Pods {
		byKey[p.Namespace+"/"+p.Name] = p
	}
	for i, nc := range plan.NewNodeClaims {
		it := nc.InstanceTypes[0]
		off := CheapestOffering(it.Offerings)
		name := fmt.Sprintf("node-%04d", i)
		labels := it.Type.Labels()
		labels[apiv1.LabelZone], labels[apiv1.LabelCapacityType] = off.Zone, off.CapacityType
		labels[apiv1.LabelNodePool], labels[apiv1.LabelHostname] = nc.NodePool, name
		avail := it.Shape.Allocatable
		for _, ds := range in.DaemonSets {
			avail = avail.Sub(ds.Pod.Requests)
			out.ExistingPods = append(out.ExistingPods, ExistingPod{Pod: Pod{Namespace: ds.Namespace, Name: ds.Name + "-" + name, Requests: ds.Pod.Requests},
				Node: name, Zone: off.Zone, Daemon: true})
		}
		for j, k := range nc.Pods {
			if gone > 0 && j%gone == gone-1 {
				continue
			}
			avail = avail.Sub(byKey[k].Requests)
			out.ExistingPods = append(out.ExistingPods, ExistingPod{Pod: byKey[k], Node: name, Zone: off.Zone})
		}
		out.ExistingNodes = append(out.ExistingNodes, Node{Name: name, Labels: labels, Taints: nc.Taints, NodePool: nc.NodePool,
			Available: avail, Price: off.Price})
	}
	return out
}

// One RemovalSimulator answers every candidate set exactly as a fresh
// SimulateRemoval does, whatever was asked before and when asked from
// several goroutines at once (its compiled pools are shared).
func TestRemovalSimulatorAnswersAsFresh(t *testing.T) {
	in := mixedInput(t, 600, 3, false)
	in.Budget = -1
	cl := clusterOf(in, Solve(in), 3)
	if len(cl.ExistingNodes) < 8 {
		t.Fatalf("only %d nodes", len(cl.ExistingNodes))
	}
	var sets [][]string
	for i := range cl.ExistingNodes {
		sets = append(sets, []string{cl.ExistingNodes[i].Name})
		if i+1 < len(cl.ExistingNodes) {
			sets = append(sets, []string{cl.ExistingNodes[i].Name, cl.ExistingNodes[i+1].Name})
		}
	}
	sets = append(sets, []string{"no-such-node"})
	want := make([]RemovalResult, len(sets))
	possible := 0
	for i, s := range sets {
		want[i] = NewRemovalSimulator(cl).Simulate(s)
		if want[i].Possible {
			possible++
		}
	}
	if possible == 0 || possible == len(sets) {
		t.Fatalf("%d of %d sets possible: the cluster does not test both answers", possible, len(sets))
	}
	rs := NewRemovalSimulator(cl)
	// Backwards, then from two goroutines.
	for i := len(sets) - 1; i >= 0; i-- {
		if got := rs.Simulate(sets[i]); !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("%v: reused simulator %+v, fresh %+v", sets[i], got, want[i])
		}
	}
	var wg sync.WaitGroup
	errs := make([]string, 2)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < len(sets); i += 2 {
				if got := rs.Simulate(sets[i]); !reflect.DeepEqual(got, want[i]) {
					errs[g] = fmt.Sprintf("%v: concurrent %+v, fresh %+v", sets[i], got, want[i])
					return
				}
			}
		}(g)
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	if got := SimulateRemoval(cl, sets[0]); !reflect.DeepEqual(got, want[0]) {
		t.Fatalf("SimulateRemoval %+v, simulator %+v", got, want[0])
	}
}
