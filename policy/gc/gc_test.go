package gc

import (
	"reflect"
	"testing"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func tagged(id, state string, age time.Duration, claim string) Instance {
	return Instance{ID: id, State: state, LaunchTime: t0.Add(-age),
		Tags: map[string]string{apiv1.TagCluster: "prod", apiv1.TagNodePool: "general", apiv1.TagNodeClaim: claim}}
}

func names(cs []Collect) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestInstancesWithoutNodeClaim(t *testing.T) {
	s := Snapshot{
		Cluster: "prod",
		Instances: []Instance{
			tagged("i-orphan", StateRunning, time.Minute, "gone-claim"),
			tagged("i-young", StateRunning, 10*time.Second, "gone-claim"),
			tagged("i-claimed", StateRunning, time.Hour, "a"),
			tagged("i-recording", StateRunning, time.Hour, "b"), // b has no provider ID yet
			tagged("i-stale", StateRunning, time.Hour, "c"),     // c names another instance
			tagged("i-leaving", StateShuttingDown, time.Hour, ""),
			tagged("i-stopped", StateStopped, time.Hour, ""),
			{ID: "i-other-cluster", State: StateRunning, LaunchTime: t0.Add(-time.Hour), Tags: map[string]string{apiv1.TagCluster: "dev", apiv1.TagNodePool: "general"}},
			{ID: "i-no-pool", State: StateRunning, LaunchTime: t0.Add(-time.Hour), Tags: map[string]string{apiv1.TagCluster: "prod"}},
			{ID: "i-no-launch-time", State: StateRunning, Tags: map[string]string{apiv1.TagCluster: "prod", apiv1.TagNodePool: "general"}},
		},
		NodeClaims: []NodeClaim{
			{Name: "a", ProviderID: "aws:///us-east-1a/i-claimed", Launched: t0.Add(-time.Hour)},
			{Name: "b"},
			{Name: "c", ProviderID: "aws:///us-east-1b/i-current", Launched: t0.Add(-time.Hour)},
		},
		Nodes: []Node{
			{Name: "ip-1", ProviderID: "aws:///us-east-1a/i-orphan", NodePool: "general", Created: t0.Add(-time.Minute)},
		},
		Lookups: map[string]string{"i-current": StateRunning},
	}
	p := Decide(s, t0, Options{})
	if got, want := names(p.Instances), []string{"i-orphan", "i-stale", "i-stopped"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("instances = %v, want %v", got, want)
	}
	if p.Instances[0].NodeName != "ip-1" || p.Instances[0].NodePool != "general" || p.Instances[0].NodeClaim != "gone-claim" {
		t.Errorf("orphan = %+v", p.Instances[0])
	}
	if p.Instances[0].Why != "instance i-orphan (launched 1m0s ago) belongs to no NodeClaim" {
		t.Errorf("why = %q", p.Instances[0].Why)
	}
	if len(p.NodeClaims) != 0 || len(p.Nodes) != 0 || len(p.Confirm) != 0 {
		t.Errorf("plan = %+v", p)
	}
	// A longer grace keeps the one-minute-old orphan.
	if got := names(Decide(s, t0, Options{LaunchGrace: 2 * time.Minute}).Instances); !reflect.DeepEqual(got, []string{"i-stale", "i-stopped"}) {
		t.Errorf("with a 2m grace: %v", got)
	}
	// A NodeClaim being deleted does not protect the instance it tagged.
	s.NodeClaims[1].Deleting = true
	if got := names(Decide(s, t0, Options{}).Instances); !reflect.DeepEqual(got, []string{"i-orphan", "i-recording", "i-stale", "i-stopped"}) {
		t.Errorf("claim b deleting: %v", got)
	}
}

// An untagged instance of a shared CreateFleet is kept while a NodeClaim
// of its batch is still launching (its retry may claim it), and collected
// once none is.
func TestUntaggedBatchInstancesWaitForTheirBatch(t *testing.T) {
	batch := func(id string, members ...string) Instance {
		in := tagged(id, StateRunning, time.Hour, "")
		delete(in.Tags, apiv1.TagNodeClaim)
		for _, m := range members {
			in.Tags[apiv1.TagLaunchBatchPrefix+m] = "token"
		}
		return in
	}
	s := Snapshot{
		Cluster:   "prod",
		Instances: []Instance{batch("i-launching", "a", "b"), batch("i-done", "c", "d"), batch("i-deleting", "e")},
		NodeClaims: []NodeClaim{
			{Name: "a", ProviderID: "aws:///us-east-1a/i-other", Launched: t0.Add(-time.Hour)},
			{Name: "b"}, // launching: no provider ID yet
			{Name: "c", ProviderID: "aws:///us-east-1a/i-c", Launched: t0.Add(-time.Hour)},
			{Name: "e", Deleting: true},
		},
		Lookups: map[string]string{"i-other": StateRunning, "i-c": StateRunning},
	}
	p := Decide(s, t0, Options{})
	if got, want := names(p.Instances), []string{"i-done", "i-deleting"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("instances = %v, want %v", got, want)
	}
}

func TestNodeClaimsWhoseInstanceIsGone(t *testing.T) {
	s := Snapshot{
		Cluster: "prod",
		Instances: []Instance{
			tagged("i-live", StateRunning, time.Hour, "live"),
			tagged("i-dying", StateShuttingDown, time.Hour, "dying"),
		},
		NodeClaims: []NodeClaim{
			{Name: "live", ProviderID: "aws:///us-east-1a/i-live", Launched: t0.Add(-time.Hour), NodePool: "general"},
			{Name: "dying", ProviderID: "aws:///us-east-1a/i-dying", NodeName: "ip-dying", Launched: t0.Add(-time.Hour), NodePool: "general"},
			{Name: "vanished", ProviderID: "aws:///us-east-1b/i-vanished", NodeName: "ip-vanished", Launched: t0.Add(-time.Hour), NodePool: "general"},
			{Name: "terminated", ProviderID: "aws:///us-east-1b/i-terminated", Launched: t0.Add(-time.Hour), NodePool: "general"},
			{Name: "just-launched", ProviderID: "aws:///us-east-1b/i-new", Launched: t0.Add(-5 * time.Second)},
			{Name: "unlaunched"},
			{Name: "deleting", ProviderID: "aws:///us-east-1b/i-x", Launched: t0.Add(-time.Hour), Deleting: true},
		},
		Nodes: []Node{
			{Name: "ip-dying", ProviderID: "aws:///us-east-1a/i-dying", NodePool: "general", Created: t0.Add(-time.Hour)},
			{Name: "ip-vanished", ProviderID: "aws:///us-east-1b/i-vanished", NodePool: "general", Created: t0.Add(-time.Hour)},
		},
	}
	// First pass: the two missing from the listing need a lookup.
	p := Decide(s, t0, Options{})
	if got := names(p.NodeClaims); !reflect.DeepEqual(got, []string{"dying"}) {
		t.Fatalf("claims before lookups = %v", got)
	}
	if !reflect.DeepEqual(p.Confirm, []string{"i-terminated", "i-vanished"}) {
		t.Fatalf("confirm = %v", p.Confirm)
	}
	if p.NodeClaims[0].NodeName != "ip-dying" || p.NodeClaims[0].Why != "instance i-dying of NodeClaim dying is shutting-down outside Joinery" {
		t.Errorf("dying = %+v", p.NodeClaims[0])
	}
	s.Lookups = map[string]string{"i-terminated": StateTerminated, "i-vanished": StateNotFound}
	p = Decide(s, t0, Options{})
	if got := names(p.NodeClaims); !reflect.DeepEqual(got, []string{"dying", "vanished", "terminated"}) {
		t.Fatalf("claims = %v", got)
	}
	if p.NodeClaims[1].NodeName != "ip-vanished" || p.NodeClaims[2].NodeName != "" || len(p.Confirm) != 0 {
		t.Errorf("plan = %+v", p)
	}
	// A lookup that finds it running (the listing lagged) collects nothing.
	s.Lookups["i-vanished"] = StateRunning
	if got := names(Decide(s, t0, Options{}).NodeClaims); !reflect.DeepEqual(got, []string{"dying", "terminated"}) {
		t.Errorf("claims when i-vanished runs = %v", got)
	}
}

func TestNodesWithoutNodeClaim(t *testing.T) {
	s := Snapshot{
		Cluster:   "prod",
		Instances: []Instance{tagged("i-orphan", StateRunning, time.Hour, "")},
		NodeClaims: []NodeClaim{
			{Name: "a", ProviderID: "aws:///us-east-1a/i-a", NodeName: "ip-a", Launched: t0.Add(-time.Hour)},
		},
		Nodes: []Node{
			{Name: "ip-a", ProviderID: "aws:///us-east-1a/i-a", NodePool: "general", Created: t0.Add(-time.Hour)},
			{Name: "ip-ghost", ProviderID: "aws:///us-east-1a/i-ghost", NodePool: "general", Created: t0.Add(-time.Hour)},
			{Name: "ip-orphan", ProviderID: "aws:///us-east-1a/i-orphan", NodePool: "general", Created: t0.Add(-time.Hour)},
			{Name: "ip-mng", ProviderID: "aws:///us-east-1a/i-mng", Created: t0.Add(-time.Hour)}, // managed node group
			{Name: "ip-foreign", ProviderID: "aws:///us-east-1a/i-foreign", NodePool: "general", Created: t0.Add(-time.Hour)},
			{Name: "ip-young", ProviderID: "aws:///us-east-1a/i-young", NodePool: "general", Created: t0.Add(-time.Second)},
			{Name: "kind-node", ProviderID: "kind://docker/kind/kind-node", NodePool: "general", Created: t0.Add(-time.Hour)},
		},
		Lookups: map[string]string{"i-a": StateRunning, "i-ghost": StateTerminated, "i-foreign": StateRunning},
	}
	p := Decide(s, t0, Options{})
	if got := names(p.Nodes); !reflect.DeepEqual(got, []string{"ip-ghost"}) {
		t.Fatalf("nodes = %v", got)
	}
	if got := names(p.Instances); !reflect.DeepEqual(got, []string{"i-orphan"}) || p.Instances[0].NodeName != "ip-orphan" {
		t.Fatalf("instances = %+v", p.Instances)
	}
	if len(p.Confirm) != 0 || len(p.NodeClaims) != 0 {
		t.Errorf("plan = %+v", p)
	}
}

func TestLaunchTemplates(t *testing.T) {
	s := Snapshot{
		LaunchTemplates: []LaunchTemplate{{Name: "used", Created: t0.Add(-time.Hour)}, {Name: "unused", Created: t0.Add(-time.Hour)}, {Name: "new", Created: t0}},
		TemplatesInUse:  map[string]bool{"used": true},
	}
	if got := names(Decide(s, t0, Options{}).LaunchTemplates); !reflect.DeepEqual(got, []string{"unused"}) {
		t.Errorf("templates = %v", got)
	}
}

func TestInstanceID(t *testing.T) {
	for in, want := range map[string]string{
		"aws:///us-east-1a/i-0abc": "i-0abc", "aws:///us-east-1a/": "", "aws://us-east-1a": "", "kind://x/y": "", "": "",
	} {
		if got := InstanceID(in); got != want {
			t.Errorf("InstanceID(%q) = %q, want %q", in, got, want)
		}
	}
}

// EC2 may not show an instance launched moments ago: a lookup's "not
// found" deletes no NodeClaim (nor Node) within the not-found grace, past
// the launch grace; a state EC2 shows (terminated) counts at once.
func TestNotFoundIsNotGoneWithinTheConsistencyWindow(t *testing.T) {
	s := Snapshot{
		Cluster: "prod",
		NodeClaims: []NodeClaim{
			{Name: "unseen", ProviderID: "aws:///us-east-1a/i-unseen", Launched: t0.Add(-40 * time.Second)},
			{Name: "ended", ProviderID: "aws:///us-east-1a/i-ended", Launched: t0.Add(-40 * time.Second)},
			{Name: "old", ProviderID: "aws:///us-east-1a/i-old", Launched: t0.Add(-2 * time.Minute)},
		},
		Nodes: []Node{{Name: "ip-unseen", ProviderID: "aws:///us-east-1b/i-node", NodePool: "general", Created: t0.Add(-40 * time.Second)}},
		Lookups: map[string]string{"i-unseen": StateNotFound, "i-ended": StateTerminated, "i-old": StateNotFound,
			"i-node": StateNotFound},
	}
	p := Decide(s, t0, Options{})
	if got := names(p.NodeClaims); !reflect.DeepEqual(got, []string{"ended", "old"}) || len(p.Nodes) != 0 {
		t.Fatalf("claims %v, nodes %v: want ended and old, no node", got, names(p.Nodes))
	}
	later := Decide(s, t0.Add(DefaultNotFoundGrace), Options{})
	if got := names(later.NodeClaims); !reflect.DeepEqual(got, []string{"unseen", "ended", "old"}) || len(later.Nodes) != 1 {
		t.Fatalf("after the grace: claims %v, nodes %v", got, names(later.Nodes))
	}
	if got := names(Decide(s, t0, Options{NotFoundGrace: 30 * time.Second}).NodeClaims); !reflect.DeepEqual(got, []string{"unseen", "ended", "old"}) {
		t.Fatalf("with a 30s not-found grace: %v", got)
	}
}

// A gang's placement group goes once no NodeClaim names it, past the
// grace its try needs to write its NodeClaims; one of unknown age stays.
func TestGangPlacementGroups(t *testing.T) {
	s := Snapshot{
		PlacementGroups: []PlacementGroup{
			{Name: "used", ID: "pg-1", Created: t0.Add(-time.Hour)},
			{Name: "unused", ID: "pg-2", Created: t0.Add(-5 * time.Minute)},
			{Name: "new", ID: "pg-3", Created: t0.Add(-5*time.Minute + time.Second)},
			{Name: "ageless", ID: "pg-4"},
		},
		GroupsInUse: map[string]bool{"pg-1": true},
	}
	if got := names(Decide(s, t0, Options{}).PlacementGroups); !reflect.DeepEqual(got, []string{"unused"}) {
		t.Errorf("placement groups = %v, want [unused] (5 min, ten default launch graces)", got)
	}
	if got := names(Decide(s, t0, Options{LaunchGrace: time.Second}).PlacementGroups); !reflect.DeepEqual(got, []string{"unused", "new"}) {
		t.Errorf("placement groups with a 1 s launch grace = %v, want [unused new]", got)
	}
}
