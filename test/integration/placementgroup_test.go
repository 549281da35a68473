//go:build integration

package integration

import (
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPlacementGroups: the world holds a cluster group "hpc" and a spread
// group "etcd" (and no "ghost": its class is not Ready,
// PlacementGroupNotFound). A class selecting hpc resolves it into its status (the
// group pinned to the class's first zone while empty, PlacementGroupReady)
// and its Deployment's three nodes all launch in that zone, from a
// template naming the group, each instance in the group (as DescribeInstances
// shows it) and each Node labelled with it. A class selecting etcd with
// eight pods that want a node each in one zone gets seven: EC2 refuses the
// eighth launch (the spread group's seven per zone), reported on its
// NodeClaim as insufficient capacity, and the eighth pod stays pending.
// Two pods spread over a partition group's partitions get a node in each,
// launched from a template naming the partition, each Node labelled with
// it.
func TestPlacementGroups(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) {
		o.PlacementGroups = []ec2.PlacementGroup{{Name: "hpc", Strategy: "cluster"}, {Name: "etcd", Strategy: "spread"},
			{Name: "kafka", Strategy: "partition", PartitionCount: 2}}
	}, false)
	e.runControllerLogged(t, func(c *controller.Config) { c.NodeClassResync = 2 * time.Second })
	recordWorkerIAM(t, e, "placementgroup") // DescribePlacementGroups; ec2:RunInstances on the group
	groups := map[string]ec2.PlacementGroup{}
	for _, g := range e.w.EC2.PlacementGroups() {
		groups[g.Name] = g
	}
	e.applyYAML(t, readTestdata(t, "placementgroup.yaml"))
	dc := dynamicClient(t, e)
	waitFor(t, time.Minute, "both classes Ready with their groups", func() bool {
		for _, name := range []string{"hpc", "etcd", "kafka"} {
			cls := getNodeClass(t, e, dc, name)
			if cls.Status.PlacementGroup == nil || !apiv1.IsConditionTrue(cls.Status.Conditions, apiv1.ConditionReady) {
				return false
			}
		}
		return true
	})
	waitFor(t, time.Minute, "the ghost class resolved", func() bool {
		return apiv1.FindCondition(getNodeClass(t, e, dc, "ghost").Status.Conditions, apiv1.ConditionPlacementGroupReady) != nil
	})
	ghost := getNodeClass(t, e, dc, "ghost")
	if c := apiv1.FindCondition(ghost.Status.Conditions, apiv1.ConditionPlacementGroupReady); c == nil || c.Reason != "PlacementGroupNotFound" ||
		c.Message != `Placement group "ghost" not found` || apiv1.IsConditionTrue(ghost.Status.Conditions, apiv1.ConditionReady) {
		t.Errorf("class ghost: PlacementGroupReady %+v, Ready %v; want PlacementGroupNotFound and not Ready", c, apiv1.IsConditionTrue(ghost.Status.Conditions, apiv1.ConditionReady))
	}
	pg := getNodeClass(t, e, dc, "hpc").Status.PlacementGroup
	if *pg != (apiv1.PlacementGroupStatus{ID: groups["hpc"].ID, Name: "hpc", Strategy: "cluster", Zone: "us-east-1a"}) {
		t.Errorf("hpc status.placementGroup %+v, want %s cluster pinned to us-east-1a", pg, groups["hpc"].ID)
	}

	waitFor(t, 3*time.Minute, "3 hpc pods Ready", func() bool { n, _ := e.readyPods("app=hpc"); return n == 3 })
	claims := e.poolClaims(t, "hpc")
	if len(claims) != 3 {
		t.Fatalf("%d hpc NodeClaims, want 3", len(claims))
	}
	for _, nc := range claims {
		id := nc.Status.ProviderID[strings.LastIndexByte(nc.Status.ProviderID, '/')+1:]
		in, _ := e.w.EC2.Instance(id)
		lt, _ := e.w.EC2.LaunchTemplate(in.LaunchTemplateID)
		node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hpc: %s %s %s in %s (group %s), template %s Placement.GroupId %s", nc.Name, in.ID, in.InstanceType, in.Zone,
			in.PlacementGroupName, lt.Name, lt.Data.PlacementGroupID)
		if in.Zone != "us-east-1a" || in.PlacementGroupName != "hpc" || in.PlacementGroupID != groups["hpc"].ID ||
			lt.Data.PlacementGroupID != groups["hpc"].ID || node.Labels[apiv1.LabelPlacementGroupID] != groups["hpc"].ID {
			t.Errorf("%s: zone %s, group %s/%s, template group %s, node label %q: want us-east-1a in hpc (%s)", in.ID, in.Zone,
				in.PlacementGroupName, in.PlacementGroupID, lt.Data.PlacementGroupID, node.Labels[apiv1.LabelPlacementGroupID], groups["hpc"].ID)
		}
	}

	waitFor(t, 3*time.Minute, "2 kafka pods Ready", func() bool { n, _ := e.readyPods("app=kafka"); return n == 2 })
	parts := map[string]bool{}
	for _, nc := range e.poolClaims(t, "kafka") {
		node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := node.Labels[apiv1.LabelPlacementGroupPartition]
		id := nc.Status.ProviderID[strings.LastIndexByte(nc.Status.ProviderID, '/')+1:]
		in, _ := e.w.EC2.Instance(id)
		lt, _ := e.w.EC2.LaunchTemplate(in.LaunchTemplateID)
		t.Logf("kafka: node %s group %s partition %s, instance partition %d, template partition %d", node.Name,
			node.Labels[apiv1.LabelPlacementGroupID], p, in.PartitionNumber, lt.Data.PartitionNumber)
		parts[p] = node.Labels[apiv1.LabelPlacementGroupID] == groups["kafka"].ID && strconv.Itoa(in.PartitionNumber) == p &&
			lt.Data.PartitionNumber == in.PartitionNumber
	}
	if len(parts) != 2 || !parts["1"] || !parts["2"] {
		t.Errorf("kafka nodes' partitions %v, want 1 and 2, each in %s", parts, groups["kafka"].ID)
	}

	inEtcd := func() []ec2.Instance {
		var out []ec2.Instance
		for _, in := range e.w.EC2.Instances() {
			if in.PlacementGroupName == "etcd" && in.State != ec2.StateTerminated {
				out = append(out, in)
			}
		}
		return out
	}
	waitFor(t, 4*time.Minute, "7 etcd pods Ready and an etcd NodeClaim refused for capacity", func() bool {
		n, _ := e.readyPods("app=etcd")
		return n == 7 && e.poolEvent(t, "etcd", "InsufficientCapacity")
	})
	for _, in := range inEtcd() {
		if in.Zone != "us-east-1a" {
			t.Errorf("etcd instance %s in %s, want us-east-1a", in.ID, in.Zone)
		}
	}
	if got := len(inEtcd()); got != ec2.SpreadGroupZoneLimit {
		t.Errorf("%d instances in the etcd spread group, want %d", got, ec2.SpreadGroupZoneLimit)
	}
	if n, _ := e.readyPods("app=etcd"); n != 7 {
		t.Errorf("%d etcd pods Ready, want 7 (the eighth has no room in the group)", n)
	}
}

// poolEvent reports whether a NodeClaim of the pool has a Warning Event
// with the reason.
func (e *env) poolEvent(t *testing.T, pool, reason string) bool {
	t.Helper()
	evs, err := e.kc.CoreV1().Events("").List(e.ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
	if err != nil {
		return false
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Kind == "NodeClaim" && strings.HasPrefix(ev.InvolvedObject.Name, pool+"-") {
			t.Logf("%s on %s: %s", reason, ev.InvolvedObject.Name, ev.Message)
			return true
		}
	}
	return false
}
