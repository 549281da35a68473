// Package gc is garbage collection policy, pure: given what EC2 and the
// cluster hold at one moment, it says which instances, NodeClaims, Nodes
// and launch templates Joinery should collect, and why. It does no I/O;
// activities/garbagecollection.go is the adapter that lists, asks and acts.
//
// Ownership is never guessed: an instance is Joinery's only when tagged
// joinery.sh/cluster=<this cluster> and karpenter.sh/nodepool; a Node only
// when it carries the karpenter.sh/nodepool label; everything else
// (managed node groups, other clusters, instances someone else launched)
// is left alone.
package gc

import (
	"fmt"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// DefaultLaunchGrace is how long an instance may exist without a NodeClaim
// naming it before it is collected, and how long a NodeClaim must have been
// launched before a missing instance counts as gone. Karpenter's AWS
// provider waits 30 s after launch; Joinery waits the same, and on top of
// it never collects an instance whose karpenter.sh/nodeclaim tag names a
// NodeClaim that has no provider ID yet (its launch is being recorded).
const DefaultLaunchGrace = 30 * time.Second

// Instance states as EC2 names them.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
	StateStopping     = "stopping"
	StateStopped      = "stopped"
	// StateNotFound is what a lookup by id answers for an instance EC2
	// does not know (InvalidInstanceID.NotFound).
	StateNotFound = "not-found"
)

// providerPrefix starts every AWS provider ID (aws:///<zone>/<instance>).
const providerPrefix = "aws:///"

// Instance is an EC2 instance as DescribeInstances by tag filter lists it.
type Instance struct {
	ID         string
	State      string
	LaunchTime time.Time
	Tags       map[string]string
}

// NodeClaim is the part of a NodeClaim the policy reads.
type NodeClaim struct {
	Name       string
	NodePool   string
	ProviderID string // status.providerID; empty before launch
	NodeName   string // status.nodeName
	// Launched is when the instance was recorded (the Launched
	// condition's lastTransitionTime; the creation time when unknown).
	Launched time.Time
	Deleting bool // deletionTimestamp set
}

// Node is the part of a Node the policy reads.
type Node struct {
	Name       string
	ProviderID string
	NodePool   string // karpenter.sh/nodepool label; empty: not Joinery's
	Created    time.Time
	Deleting   bool
}

// LaunchTemplate is a launch template tagged for this cluster.
type LaunchTemplate struct {
	Name    string
	Created time.Time
}

// Snapshot is one consistent-enough view: the instances listed (tagged for
// this cluster, not terminated), NodeClaims and Nodes from the informer
// caches, and, for instances not in the list, what a lookup by id said.
type Snapshot struct {
	Cluster    string
	Instances  []Instance
	NodeClaims []NodeClaim
	Nodes      []Node
	// Lookups holds DescribeInstances-by-id answers (StateNotFound for an
	// unknown id) for ids Plan asked to confirm.
	Lookups map[string]string
	// LaunchTemplates, when the launch-template API is there, and the
	// names NodeClaims or NodeClasses still use (or that must stay, such
	// as the configured default template).
	LaunchTemplates []LaunchTemplate
	TemplatesInUse  map[string]bool
	// PlacementGroups are the cluster placement groups gang tries created
	// (tagged for this cluster); GroupsInUse the ids a NodeClaim names.
	PlacementGroups []PlacementGroup
	GroupsInUse     map[string]bool
}

// PlacementGroup is a placement group a gang try created.
type PlacementGroup struct {
	Name, ID string
	Created  time.Time // its joinery.sh/created-at tag (zero: unknown)
}

// placementGroupGraces: a gang's new group is kept while no NodeClaim
// names it for this many launch graces (5 min by default): its try
// writes the NodeClaims after planning (a few solves), and a retried
// plan reuses the group.
const placementGroupGraces = 10

// DefaultNotFoundGrace is how long after a launch a lookup's "not found"
// may only mean EC2 does not show the instance yet (its API is eventually
// consistent): the consistency window providers/aws assumes.
const DefaultNotFoundGrace = time.Minute

// Options tunes the policy (zero: defaults).
type Options struct {
	LaunchGrace time.Duration
	// NotFoundGrace: an instance a lookup does not find counts as gone
	// only once its NodeClaim was launched (its Node created) this long
	// ago; a state EC2 shows (shutting-down, terminated) counts at once.
	NotFoundGrace time.Duration
}

// Plan is what to collect and why. Confirm lists instance ids that are not
// in the tag listing and whose state decides a NodeClaim or Node: look them
// up by id and plan again with Snapshot.Lookups filled. Until then nothing
// is collected for them (the listing is eventually consistent: a new
// instance may be missing from it for a while).
type Plan struct {
	Instances       []Collect // terminate (and delete their Nodes)
	NodeClaims      []Collect // delete (their instance is gone)
	Nodes           []Collect // delete (no NodeClaim, instance gone)
	LaunchTemplates []Collect
	PlacementGroups []Collect // delete (EC2 refuses while instances are in it)
	Confirm         []string
}

// Collect is one object to collect.
type Collect struct {
	Name       string // instance id, NodeClaim, Node or template name
	NodePool   string
	InstanceID string
	NodeClaim  string
	NodeName   string // the Node that goes with it, if any (Joinery's only)
	Why        string
}

// InstanceID returns the instance id of an aws:///<zone>/<id> provider ID
// ("" for anything else).
func InstanceID(providerID string) string {
	if !strings.HasPrefix(providerID, providerPrefix) {
		return ""
	}
	rest := providerID[len(providerPrefix):]
	i := strings.LastIndexByte(rest, '/')
	if i < 0 || i == len(rest)-1 {
		return ""
	}
	return rest[i+1:]
}

// Owned reports whether an instance is Joinery's in this cluster.
func Owned(i Instance, cluster string) bool {
	return cluster != "" && i.Tags[apiv1.TagCluster] == cluster && i.Tags[apiv1.TagNodePool] != ""
}

// gone reports whether an instance state means it no longer runs.
func gone(state string) bool {
	return state == StateTerminated || state == StateShuttingDown || state == StateNotFound
}

// Decide plans one garbage-collection pass at time now.
func Decide(s Snapshot, now time.Time, o Options) Plan {
	d := newDecision(s, now, o)
	var p Plan
	p.Instances = d.orphanInstances()
	p.NodeClaims = d.goneNodeClaims()
	p.Nodes = d.goneNodes()
	p.LaunchTemplates = d.unusedLaunchTemplates()
	p.PlacementGroups = d.unusedPlacementGroups()
	for id := range d.confirm {
		p.Confirm = append(p.Confirm, id)
	}
	sort.Strings(p.Confirm)
	return p
}

// decision is one Decide: the snapshot, its indexes, and the instances
// whose state must be confirmed by a lookup.
type decision struct {
	s               Snapshot
	now             time.Time
	grace           time.Duration
	notFoundGrace   time.Duration
	claimByName     map[string]NodeClaim
	claimByInstance map[string]NodeClaim
	nodeByInstance  map[string]Node // Joinery nodes only
	nodeByName      map[string]Node
	listed          map[string]Instance
	confirm         map[string]bool
}

func newDecision(s Snapshot, now time.Time, o Options) *decision {
	d := &decision{s: s, now: now, grace: o.LaunchGrace, notFoundGrace: o.NotFoundGrace,
		claimByName: map[string]NodeClaim{}, claimByInstance: map[string]NodeClaim{},
		nodeByInstance: map[string]Node{}, nodeByName: map[string]Node{},
		listed: map[string]Instance{}, confirm: map[string]bool{}}
	if d.grace <= 0 {
		d.grace = DefaultLaunchGrace
	}
	if d.notFoundGrace <= 0 {
		d.notFoundGrace = DefaultNotFoundGrace
	}
	for _, c := range s.NodeClaims {
		d.claimByName[c.Name] = c
		if id := InstanceID(c.ProviderID); id != "" {
			d.claimByInstance[id] = c
		}
	}
	for _, n := range s.Nodes {
		d.nodeByName[n.Name] = n
		if id := InstanceID(n.ProviderID); id != "" && n.NodePool != "" {
			d.nodeByInstance[id] = n
		}
	}
	for _, i := range s.Instances {
		d.listed[i.ID] = i
	}
	return d
}

// young reports whether t is unknown or within the launch grace.
func (d *decision) young(t time.Time) bool {
	return t.IsZero() || d.now.Sub(t) < d.grace
}

// orphanInstances: (a) instances of this cluster that no NodeClaim names.
func (d *decision) orphanInstances() []Collect {
	var out []Collect
	for _, i := range d.s.Instances {
		if !Owned(i, d.s.Cluster) || gone(i.State) {
			continue
		}
		if _, ok := d.claimByInstance[i.ID]; ok {
			continue
		}
		if tagged, ok := d.claimByName[i.Tags[apiv1.TagNodeClaim]]; ok && tagged.ProviderID == "" && !tagged.Deleting {
			continue // its launch is being recorded
		}
		if d.memberLaunching(i) {
			continue
		}
		if d.young(i.LaunchTime) {
			continue
		}
		c := Collect{Name: i.ID, InstanceID: i.ID, NodePool: i.Tags[apiv1.TagNodePool], NodeClaim: i.Tags[apiv1.TagNodeClaim],
			Why: fmt.Sprintf("instance %s (launched %s ago) belongs to no NodeClaim", i.ID, d.now.Sub(i.LaunchTime).Round(time.Second))}
		if n, ok := d.nodeByInstance[i.ID]; ok {
			c.NodeName = n.Name
		}
		out = append(out, c)
	}
	return out
}

// memberLaunching reports whether i is an instance of a shared
// CreateFleet not yet tagged with its NodeClaim while a NodeClaim of that
// batch is still launching: it may be the one whose answer was lost, and
// its launch's retry claims it.
func (d *decision) memberLaunching(i Instance) bool {
	if i.Tags[apiv1.TagNodeClaim] != "" {
		return false
	}
	for k := range i.Tags {
		if name, ok := strings.CutPrefix(k, apiv1.TagLaunchBatchPrefix); ok {
			if c, ok := d.claimByName[name]; ok && c.ProviderID == "" && !c.Deleting {
				return true
			}
		}
	}
	return false
}

// instanceGone is the instance's state and whether it is gone, from the
// listing or else a lookup; an instance neither knows is to be confirmed
// (and not gone yet). One the lookup did not find, launched at since,
// is not gone within the not-found grace: EC2 may not show it yet.
func (d *decision) instanceGone(id string, since time.Time) (string, bool) {
	if i, ok := d.listed[id]; ok {
		return i.State, gone(i.State)
	}
	st, ok := d.s.Lookups[id]
	if !ok {
		d.confirm[id] = true
		return "", false
	}
	if st == StateNotFound && d.now.Sub(since) < d.notFoundGrace {
		return st, false
	}
	return st, gone(st)
}

// goneNodeClaims: (b) NodeClaims whose instance was terminated outside
// Joinery.
func (d *decision) goneNodeClaims() []Collect {
	var out []Collect
	for _, c := range d.s.NodeClaims {
		id := InstanceID(c.ProviderID)
		if id == "" || c.Deleting || d.young(c.Launched) {
			continue
		}
		st, isGone := d.instanceGone(id, c.Launched)
		if !isGone {
			continue
		}
		col := Collect{Name: c.Name, NodeClaim: c.Name, InstanceID: id, NodePool: c.NodePool,
			Why: fmt.Sprintf("instance %s of NodeClaim %s is %s outside Joinery", id, c.Name, st)}
		if n, ok := d.nodeByInstance[id]; ok {
			col.NodeName = n.Name
		} else if n, ok := d.nodeByName[c.NodeName]; ok && n.NodePool != "" && InstanceID(n.ProviderID) == id {
			col.NodeName = n.Name
		}
		out = append(out, col)
	}
	return out
}

// goneNodes: (c) Joinery Nodes with no NodeClaim whose instance is gone.
func (d *decision) goneNodes() []Collect {
	claimedNode := map[string]bool{}
	for _, c := range d.s.NodeClaims {
		if c.NodeName != "" {
			claimedNode[c.NodeName] = true
		}
	}
	var out []Collect
	for _, n := range d.s.Nodes {
		id := InstanceID(n.ProviderID)
		if n.NodePool == "" || id == "" || n.Deleting || claimedNode[n.Name] || d.young(n.Created) {
			continue
		}
		if _, ok := d.claimByInstance[id]; ok {
			continue
		}
		if i, ok := d.listed[id]; ok && Owned(i, d.s.Cluster) && !gone(i.State) {
			continue // (a) handles a live orphan instance and its Node
		}
		st, isGone := d.instanceGone(id, n.Created)
		if !isGone {
			continue
		}
		out = append(out, Collect{Name: n.Name, NodeName: n.Name, InstanceID: id, NodePool: n.NodePool,
			Why: fmt.Sprintf("node %s has no NodeClaim and its instance %s is %s", n.Name, id, st)})
	}
	return out
}

// unusedLaunchTemplates: (d) launch templates of this cluster no
// NodeClaim or NodeClass uses.
func (d *decision) unusedLaunchTemplates() []Collect {
	var out []Collect
	for _, lt := range d.s.LaunchTemplates {
		if d.s.TemplatesInUse[lt.Name] || d.young(lt.Created) {
			continue
		}
		out = append(out, Collect{Name: lt.Name, Why: "launch template " + lt.Name + " is used by no NodeClaim or NodeClass"})
	}
	return out
}

// unusedPlacementGroups: (e) gang placement groups no NodeClaim names,
// past placementGroupGraces launch graces (one of unknown age is kept).
func (d *decision) unusedPlacementGroups() []Collect {
	var out []Collect
	for _, g := range d.s.PlacementGroups {
		if d.s.GroupsInUse[g.ID] || g.Created.IsZero() || d.now.Sub(g.Created) < placementGroupGraces*d.grace {
			continue
		}
		out = append(out, Collect{Name: g.Name, Why: "gang placement group " + g.Name + " (" + g.ID + ") is named by no NodeClaim"})
	}
	return out
}
