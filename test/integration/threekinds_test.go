//go:build integration

package integration

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Three kinds of node a migrating platform team runs side by side, on one
// local world: a Windows node (EKS's Windows image, the PowerShell
// bootstrap), an EFA node in a cluster placement group (the efa-only
// interface and the group both in its launch template, the instance in
// the group) and a capacity-block node (a capacity-block template
// targeting the block). Each node's launch template is logged.
func TestWindowsEFAClusterAndCapacityBlockNodesSideBySide(t *testing.T) {
	parallel(t)
	e := startEnvWorld(t, func(o *world.Options) {
		o.PlacementGroups = []ec2.PlacementGroup{{Name: "hpc", Strategy: "cluster"}}
	}, false)
	now := time.Now()
	block, err := e.w.EC2.AddCapacityReservation(ec2.CapacityReservation{InstanceType: "m5.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		ReservationType: ec2.ReservationTypeCapacityBlock, InstanceMatchCriteria: "targeted", StartDate: now.Add(-time.Minute),
		EndDate: now.Add(24 * time.Hour), Tags: map[string]string{"joinery.sh/purpose": "capacityblock-test"}})
	if err != nil {
		t.Fatal(err)
	}
	e.runControllerLogged(t, func(c *controller.Config) { c.NodeClassResync = 2 * time.Second })
	e.applyWithDefaultClass(t, "testdata/windows.yaml", "testdata/capacityblock.yaml")
	e.applyYAML(t, readTestdata(t, "efa-cluster.yaml"))

	e.reservedNode(t, block, apiv1.CapacityReservationTypeCapacityBlock, "false", ec2.LifecycleCapacityBlock)
	e.logTemplateOfPool(t, "capblock")
	waitFor(t, 4*time.Minute, "iis Running", func() bool { n, _ := e.readyPods("app=iis"); return n == 12 })
	win := e.logTemplateOfPool(t, "windows")
	ud, _ := base64.StdEncoding.DecodeString(win.Data.UserData)
	if !strings.HasPrefix(string(ud), "<powershell>") || !strings.Contains(string(ud), "Start-EKSBootstrap.ps1") {
		t.Errorf("windows template user data %.80q", ud)
	}
	waitFor(t, 3*time.Minute, "mpi-hpc Running", func() bool { n, _ := e.readyPods("app=mpi-hpc"); return n == 1 })
	hpc := e.logTemplateOfPool(t, "efa-hpc")
	var group ec2.PlacementGroup
	for _, g := range e.w.EC2.PlacementGroups() {
		if g.Name == "hpc" {
			group = g
		}
	}
	var types []string
	for _, i := range hpc.Data.Interfaces {
		types = append(types, i.Type)
	}
	if hpc.Data.PlacementGroupID != group.ID || strings.Join(types, ",") != "interface,efa-only" {
		t.Errorf("efa-hpc template: group %q, interfaces %v; want %s (hpc) and interface,efa-only", hpc.Data.PlacementGroupID, types, group.ID)
	}
	for _, nc := range e.poolClaims(t, "efa-hpc") {
		in, _ := e.w.EC2.Instance(instanceOfClaim(nc))
		node, err := e.kc.CoreV1().Nodes().Get(e.ctx, nc.Status.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		efa := node.Status.Allocatable["vpc.amazonaws.com/efa"]
		if in.PlacementGroupID != group.ID || in.EFAInterfaces() != 1 || efa.Value() != 1 {
			t.Errorf("instance %s (%s): group %q, %d EFA interfaces, node efa %s; want hpc and one", in.ID, in.InstanceType,
				in.PlacementGroupID, in.EFAInterfaces(), efa.String())
		}
	}
}

// logTemplateOfPool logs the launch template of the pool's first
// NodeClaim (user data cut to its start) and returns it.
func (e *env) logTemplateOfPool(t *testing.T, pool string) ec2.LaunchTemplate {
	t.Helper()
	claims := e.poolClaims(t, pool)
	if len(claims) == 0 {
		t.Fatalf("no NodeClaim in pool %s", pool)
	}
	nc := claims[0]
	in, _ := e.w.EC2.Instance(instanceOfClaim(nc))
	lt, ok := e.w.EC2.LaunchTemplate(in.LaunchTemplateID)
	if !ok {
		t.Fatalf("pool %s: instance %s has no template %s", pool, in.ID, in.LaunchTemplateID)
	}
	data := lt.Data
	ud, _ := base64.StdEncoding.DecodeString(data.UserData)
	data.UserData = strings.SplitN(string(ud), "\n", 2)[0] + " ..."
	js, _ := json.Marshal(data)
	t.Logf("%s: NodeClaim %s, %s %s in %s, node %s; launch template %s: %s", pool, nc.Name, in.ID, in.InstanceType, in.Zone,
		nc.Status.NodeName, lt.Name, js)
	return lt
}
