package aws_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/providers/aws"
	simec2 "github.com/joinery/joinery/sim/ec2"
)

// A placementGroupSelector resolves by name or by id as Karpenter's
// provider asks (DescribePlacementGroups, state available); a group EC2
// does not have is nil, not an error.
func TestPlacementGroupResolves(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	kafka, err := w.ec2.AddPlacementGroup(simec2.PlacementGroup{Name: "kafka", Strategy: simec2.PlacementStrategyPartition, PartitionCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	name, id, ghost := "kafka", kafka.ID, "ghost"
	for _, sel := range []*apiv1.PlacementGroupSelector{{Name: &name}, {ID: &id}} {
		pg, err := w.c.PlacementGroup(ctx, sel)
		if err != nil || pg == nil || *pg != (apiv1.PlacementGroupStatus{ID: kafka.ID, Name: "kafka", Strategy: "partition", PartitionCount: 3}) {
			t.Errorf("selector %+v: %+v, %v", sel, pg, err)
		}
	}
	if pg, err := w.c.PlacementGroup(ctx, &apiv1.PlacementGroupSelector{Name: &ghost}); pg != nil || err != nil {
		t.Errorf("unknown group: %+v, %v; want nil, nil", pg, err)
	}
}

// The template names the group by id (Placement.GroupId, as Karpenter's
// do) and only when the class has one; the instance runs in the group
// (Get reports it and its partition); a cluster group holds its zone
// (PlacementGroupZones, and another zone's override is refused as EC2
// does, not as a capacity shortage); a full spread group is a capacity
// shortage in that zone.
func TestLaunchTemplateCarriesPlacementGroup(t *testing.T) {
	w := newLaunchWorld(t)
	ctx := context.Background()
	img, _, _ := w.c.GetParameter(ctx, al2023x86)
	sn := subnets(t, w.c)
	groups := map[string]simec2.PlacementGroup{}
	for _, g := range []simec2.PlacementGroup{{Name: "hpc", Strategy: "cluster"}, {Name: "kafka", Strategy: "partition", PartitionCount: 2}, {Name: "etcd", Strategy: "spread"}} {
		pg, err := w.ec2.AddPlacementGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		groups[g.Name] = pg
	}
	w.ec2.SetRecording(true)
	for _, name := range []string{"hpc", "kafka", "etcd", "plain"} {
		if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/"+name, aws.LaunchTemplateData{ImageID: img, PlacementGroupID: groups[name].ID}); err != nil {
			t.Fatal(err)
		}
	}
	sent := map[string]string{}
	for _, r := range w.ec2.Requests() {
		var p []string
		for k, v := range r.Params {
			if strings.HasPrefix(k, "LaunchTemplateData.Placement.") {
				p = append(p, k+"="+v[0])
			}
		}
		sent[r.Params.Get("LaunchTemplateName")] = strings.Join(p, " ")
	}
	for _, name := range []string{"hpc", "kafka", "etcd"} {
		if want := "LaunchTemplateData.Placement.GroupId=" + groups[name].ID; sent["joinery/"+name] != want {
			t.Errorf("%s: Placement sent %q, want %q", name, sent["joinery/"+name], want)
		}
	}
	if _, err := w.c.EnsureLaunchTemplate(ctx, "joinery/kafka-2", aws.LaunchTemplateData{ImageID: img, PlacementGroupID: groups["kafka"].ID, PartitionNumber: 2}); err != nil {
		t.Fatal(err)
	}
	for _, r := range w.ec2.Requests() {
		if r.Params.Get("LaunchTemplateName") == "joinery/kafka-2" && r.Params.Get("LaunchTemplateData.Placement.PartitionNumber") != "2" {
			t.Errorf("partition 2 template sent Placement %v", r.Params)
		}
	}
	if sent["joinery/plain"] != "" {
		t.Errorf("a template without a group sent Placement %q", sent["joinery/plain"])
	}

	n := 0
	launch := func(template string, zones ...string) (aws.Instance, error) {
		n++
		var in []aws.Subnet
		for _, s := range sn {
			for _, z := range zones {
				if s.Zone == z {
					in = append(in, s)
				}
			}
		}
		req := launchReq(in, apiv1.CapacityTypeOnDemand, "m5.large")
		req.LaunchTemplateName, req.NodeClaim = "joinery/"+template, "general-purpose-pg"+string(rune('a'+n))
		req.PlacementGroupID = groups[template].ID
		return w.c.Launch(ctx, req)
	}
	in, err := launch("kafka", "us-east-1a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.c.Get(ctx, in.ID)
	if err != nil || got.PlacementGroupID != groups["kafka"].ID || got.PartitionNumber != 1 {
		t.Errorf("kafka instance: group %q partition %d (%v)", got.PlacementGroupID, got.PartitionNumber, err)
	}
	groups["kafka-2"] = groups["kafka"]
	in, err = launch("kafka-2", "us-east-1a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := w.c.Get(ctx, in.ID); err != nil || got.PartitionNumber != 2 {
		t.Errorf("kafka-2 instance: partition %d (%v), want 2 as the template asks", got.PartitionNumber, err)
	}
	if _, err := launch("hpc", "us-east-1b"); err != nil {
		t.Fatal(err)
	}
	if zones, err := w.c.PlacementGroupZones(ctx, "hpc"); err != nil || strings.Join(zones, ",") != "us-east-1b" {
		t.Errorf("hpc zones %v (%v)", zones, err)
	}
	_, err = launch("hpc", "us-east-1a")
	var none *aws.NoLaunchError
	if !errors.As(err, &none) || aws.IsInsufficientCapacity(err) || none.Errors[0].Code != simec2.CodeInvalidPlacementGroupInUse {
		t.Errorf("hpc in another zone: %v, want InvalidPlacementGroup.InUse, not a capacity shortage", err)
	}
	for i := 0; i < simec2.SpreadGroupZoneLimit; i++ {
		if _, err := launch("etcd", "us-east-1c"); err != nil {
			t.Fatalf("etcd instance %d: %v", i+1, err)
		}
	}
	_, err = launch("etcd", "us-east-1c")
	var ice *aws.InsufficientCapacityError
	if !errors.As(err, &ice) || len(ice.Errors) != 1 || !strings.Contains(ice.Errors[0].Message, "spread placement group") {
		t.Errorf("eighth etcd instance in one zone: %v, want insufficient capacity", err)
	}
	// Marked within the group only, as Karpenter scopes it.
	if len(ice.Offerings) != 1 || ice.Offerings[0].PlacementGroup != groups["etcd"].ID {
		t.Errorf("unavailable offerings %v, want m5.large in us-east-1c within %s", ice.Offerings, groups["etcd"].ID)
	}
}
