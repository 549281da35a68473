package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// Garbage collection: names, ids and types.
const (
	GarbageCollectionWorkflow = "GarbageCollection"
	// GarbageCollectionWorkflowID is the singleton: however many workers
	// run, one pass at a time.
	GarbageCollectionWorkflowID = "garbage-collection"

	ActivityPlanGarbageCollection  = "PlanGarbageCollection"
	ActivityCollectInstances       = "CollectInstances"
	ActivityCollectNodeClaims      = "CollectNodeClaims"
	ActivityCollectLaunchTemplates = "CollectLaunchTemplates"
	ActivityCollectPlacementGroups = "CollectPlacementGroups"
	// versionGCPlacementGroups: passes collect gangs' placement groups
	// (only a pass that finds one records the marker).
	versionGCPlacementGroups = "gc-placement-groups"

	// DefaultGCInterval is the time between passes (Karpenter: 2 minutes).
	DefaultGCInterval = 2 * time.Minute
	// gcPassesPerRun bounds one run's history; then continue-as-new.
	gcPassesPerRun = 100
	gcRecentKept   = 20

	// Garbage-collected kinds (the kind label of joinery_garbage_collected_total).
	GCKindInstance       = "instance"
	GCKindNodeClaim      = "nodeclaim"
	GCKindNode           = "node"
	GCKindLaunchTemplate = "launch_template"
	GCKindPlacementGroup = "placement_group"
)

// GCInput starts (or continues-as-new) the GarbageCollection loop.
type GCInput struct {
	// Interval between passes (default 2 min); LaunchGrace is how long an
	// instance may live without a NodeClaim, and a NodeClaim must have been
	// launched before its missing instance counts (zero: gc.DefaultLaunchGrace, 30 s).
	Interval    time.Duration `json:"interval,omitempty"`
	LaunchGrace time.Duration `json:"launchGrace,omitempty"`
	State       GCState       `json:"state"`
}

// GCState is carried across continue-as-new.
type GCState struct {
	Passes   int       `json:"passes"`
	LastPass time.Time `json:"lastPass,omitempty"`
	// Collected counts what every pass collected, by kind.
	Collected map[string]int `json:"collected,omitempty"`
	// Recent holds the last collected objects, newest last.
	Recent []GCRecord `json:"recent,omitempty"`
	// LastError is the last pass's failure, if it failed.
	LastError string `json:"lastError,omitempty"`
}

// GCRecord is one collected object.
type GCRecord struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	Item GCItem    `json:"item"`
}

// GCPass asks for one pass's plan at workflow time Now.
type GCPass struct {
	Now         time.Time     `json:"now"`
	LaunchGrace time.Duration `json:"launchGrace,omitempty"`
}

// GCItem is one object to collect (an instance, NodeClaim, Node or launch
// template) with what the collecting activity re-checks.
type GCItem struct {
	Name       string    `json:"name"`
	NodePool   string    `json:"nodePool,omitempty"`
	InstanceID string    `json:"instanceId,omitempty"`
	NodeClaim  string    `json:"nodeClaim,omitempty"`
	NodeName   string    `json:"nodeName,omitempty"`
	State      string    `json:"state,omitempty"`      // the instance's EC2 state when planned
	LaunchTime time.Time `json:"launchTime,omitempty"` // instances only
	Why        string    `json:"why"`
}

// GCPlan is what one pass found to collect.
type GCPlan struct {
	Instances       []GCItem `json:"instances,omitempty"`
	NodeClaims      []GCItem `json:"nodeClaims,omitempty"`
	Nodes           []GCItem `json:"nodes,omitempty"`
	LaunchTemplates []GCItem `json:"launchTemplates,omitempty"`
	// PlacementGroups are gang tries' cluster placement groups no
	// NodeClaim names any more.
	PlacementGroups []GCItem `json:"placementGroups,omitempty"`
	// Listed is how many instances the tag filter listed.
	Listed int `json:"listed"`
	// LaunchTemplateAPI is false while the worker has no launch-template
	// API (templates are then not collected).
	LaunchTemplateAPI bool `json:"launchTemplateApi,omitempty"`
}

// GCCollect asks an activity to collect items (re-checked first).
type GCCollect struct {
	Now         time.Time     `json:"now"`
	LaunchGrace time.Duration `json:"launchGrace,omitempty"`
	Items       []GCItem      `json:"items"`
	Nodes       []GCItem      `json:"nodes,omitempty"` // CollectNodeClaims: Nodes without NodeClaim
}

// GCResult is what an activity collected, by kind; Kept are items the
// re-check spared (the cluster changed since the plan).
type GCResult struct {
	Collected map[string][]GCItem `json:"collected,omitempty"`
	Kept      []string            `json:"kept,omitempty"`
}

// GCStatus is the status query's answer.
type GCStatus struct {
	GCState
	Phase string `json:"phase"` // waiting, planning, collecting
}

// GarbageCollection is the singleton (id "garbage-collection") that
// collects what leaked: each pass plans from one DescribeInstances by tag
// and the informer caches, then terminates instances of this cluster that
// belong to no NodeClaim, deletes NodeClaims (with their Nodes) whose
// instance was terminated outside Joinery and Joinery Nodes left without
// NodeClaim and instance, and deletes launch templates nothing uses and
// gangs' placement groups no NodeClaim names. A
// collected NodeClaim's nodeclaim/<name> workflow is signalled to end.
func GarbageCollection(ctx workflow.Context, in GCInput) error {
	if in.Interval <= 0 {
		in.Interval = DefaultGCInterval
	}
	st := in.State
	if st.Collected == nil {
		st.Collected = map[string]int{}
	}
	current := PhaseWaiting
	phase := loopPhase(ctx, &current)
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (GCStatus, error) {
		return GCStatus{GCState: st, Phase: current}, nil
	}); err != nil {
		return err
	}
	act := workflow.WithActivityOptions(ctx, planCall(3))
	record := func(res GCResult) {
		for _, kind := range []string{GCKindInstance, GCKindNodeClaim, GCKindNode, GCKindLaunchTemplate, GCKindPlacementGroup} {
			for _, it := range res.Collected[kind] {
				st.Collected[kind]++
				st.Recent = append(st.Recent, GCRecord{At: workflow.Now(ctx), Kind: kind, Item: it})
			}
		}
		if len(st.Recent) > gcRecentKept {
			st.Recent = st.Recent[len(st.Recent)-gcRecentKept:]
		}
	}
	for pass := 0; pass < gcPassesPerRun; pass++ {
		phase.Set(PhaseWaiting)
		if err := workflow.Sleep(ctx, in.Interval); err != nil {
			return err
		}
		phase.Set(PhasePlanning)
		st.Passes++
		st.LastPass = workflow.Now(ctx)
		st.LastError = ""
		var plan GCPlan
		if err := workflow.ExecuteActivity(act, ActivityPlanGarbageCollection, GCPass{Now: workflow.Now(ctx), LaunchGrace: in.LaunchGrace}).Get(ctx, &plan); err != nil {
			st.LastError = "plan: " + err.Error()
			continue
		}
		phase.Set(PhaseCollecting)
		collect := func(name string, c GCCollect) GCResult {
			var res GCResult
			if err := workflow.ExecuteActivity(act, name, c).Get(ctx, &res); err != nil {
				st.LastError = name + ": " + err.Error()
			}
			record(res)
			return res
		}
		now := workflow.Now(ctx)
		if len(plan.Instances) > 0 {
			collect(ActivityCollectInstances, GCCollect{Now: now, LaunchGrace: in.LaunchGrace, Items: plan.Instances})
		}
		if len(plan.NodeClaims) > 0 || len(plan.Nodes) > 0 {
			res := collect(ActivityCollectNodeClaims, GCCollect{Now: now, LaunchGrace: in.LaunchGrace, Items: plan.NodeClaims, Nodes: plan.Nodes})
			// End each collected NodeClaim's own saga: its terminate step
			// finds the instance and objects gone and finishes.
			for _, it := range res.Collected[GCKindNodeClaim] {
				if err := workflow.SignalExternalWorkflow(ctx, NodeClaimWorkflowID(it.Name), "", SignalTerminate, "garbage collected: "+it.Why).Get(ctx, nil); err != nil {
					// Its saga has ended already: nothing to end.
					workflow.GetLogger(ctx).Info("collected NodeClaim's workflow not signalled", "nodeclaim", it.Name, "error", err)
				}
			}
		}
		if len(plan.LaunchTemplates) > 0 {
			collect(ActivityCollectLaunchTemplates, GCCollect{Now: now, LaunchGrace: in.LaunchGrace, Items: plan.LaunchTemplates})
		}
		if len(plan.PlacementGroups) > 0 && workflow.GetVersion(ctx, versionGCPlacementGroups, workflow.DefaultVersion, 1) == 1 {
			collect(ActivityCollectPlacementGroups, GCCollect{Now: now, LaunchGrace: in.LaunchGrace, Items: plan.PlacementGroups})
		}
	}
	phase.Set(PhaseContinuing)
	return workflow.NewContinueAsNewError(ctx, GarbageCollectionWorkflow, GCInput{Interval: in.Interval, LaunchGrace: in.LaunchGrace, State: st})
}
