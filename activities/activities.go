// Package activities holds Joinery's Temporal activities, one type per saga
// (Provisioning, Launch, Lifecycle, Drain, Disruption, Interruption, Gang,
// GC), registered by New(deps).Register under the names the workflows call
// them by. Activities carry out what a workflow or a policy package
// decided; the rules themselves live in policy/ (disruption, drain,
// minvalues, nodeclass...). They reach EC2 through providers/aws and
// Kubernetes through providers/kube, which makes every write.
//
// Each saga type holds only the Deps it uses and the parts it shares with
// other sagas, each made once by New: the solver snapshot builder
// (snapshots, with the capacity buffers it plans for: buffers), NodePool
// and EC2NodeClass lookup with the skipped-NodePool report (pools), the
// NodeClaim writer (claimWriter) and Events published once per key
// (events). What the controller reads too is in package capacity (the
// pending-pod ledger and nominations, prices, instance types, the capacity
// buffers' memory); Headroom checks the buffers over the snapshot.
package activities

import (
	"context"
	"sync"
	"time"

	"github.com/joinery/joinery/api/v1alpha1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/policy/overlay"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// Deps are what the activities are built from: the adapters and the
// settings the sagas read (New gives each saga only those it uses).
type Deps struct {
	Cluster *kube.Cluster
	Cloud   *aws.Client
	Catalog *catalog.Catalog
	// Market, when set, makes offerings region-true: the zones each type
	// is sold in and the zone's spot price, refreshed by the controller
	// (catalog.Market). Nil: the catalog's static offerings.
	Market *catalog.Market
	// CatalogStatus, when set, says where the catalog's facts come from
	// now (the controller's refresher), for `starter status`.
	CatalogStatus func() string
	ICE           *aws.ICECache
	// State, when set, holds what every replica must see and what must
	// outlive every worker: the ICE cache and the pending-pod memo (see
	// BindSharedState). Nil: this process's memory only.
	State   *kube.StateStore
	Metrics *metrics.Metrics
	Log     *zap.Logger
	// ClusterFacts are what a node's user data needs to join the cluster.
	ClusterFacts bootstrap.Cluster
	// ClusterName is the joinery.sh/cluster tag value: garbage collection
	// only ever touches instances tagged with it.
	ClusterName string
	// LaunchTemplates, when set, lets garbage collection delete the
	// cluster's launch templates nothing uses (nil: none collected;
	// EnableLaunchTemplateGC sets the Launch activities' own).
	LaunchTemplates LaunchTemplates
	// RegistrationTTL is passed to every NodeClaim saga (0: the default 15 min).
	RegistrationTTL time.Duration
	// NominationWindow: a pending pod nominated to a NodeClaim whose Node
	// has been Ready for longer than this is provisioned again.
	NominationWindow time.Duration
	// SolverBudget bounds each solver.Solve (solver.Input.Budget: 0 is
	// solver.DefaultBudget).
	SolverBudget time.Duration
	// MinValuesPolicy is Karpenter's MIN_VALUES_POLICY: MinValuesPolicyStrict
	// ("" too) refuses a NodeClaim whose types cannot meet minValues,
	// MinValuesPolicyBestEffort plans it with minValues relaxed.
	MinValuesPolicy string
	// SpotToSpotConsolidation is the feature gate of that name: spot nodes
	// may be replaced by cheaper spot nodes (off: only deleted).
	SpotToSpotConsolidation bool
	// StaticCapacity is the feature gate of that name: static NodePools
	// (spec.replicas) are kept at their count (off: such a pool is
	// reported not honoured, ValidationSucceeded=False, and skipped).
	StaticCapacity bool
	// CapacityBuffer is the feature gate of that name: CapacityBuffers
	// (autoscaling.x-k8s.io) are planned for as virtual pods.
	CapacityBuffer bool
	// SpreadDefaults are kube-scheduler's default topology spread
	// constraints (--scheduler-config), given to pods without their own;
	// nil: none. With them, Cluster must watch what selects pods
	// (cluster.WatchSpreadSelectors).
	SpreadDefaults solver.SpreadDefaults
	// Pseudonym, set when payload encryption is on, maps a node name to
	// the keyed hash (codec.Keyring.Pseudonym) that stands for it in
	// workflow ids; the sagas these activities plan are then Private (no
	// node name or instance id in search attributes). Nil: identifiers are
	// used in clear.
	Pseudonym func(string) string
}

// Activities is every saga's activities, built by New over one Deps, and
// the services the controller reads too: the pending-pod ledger (Ledger),
// prices (Prices), the nominations (Nominations), the capacity buffers' check (Headroom), the NodeOverlay
// verdicts (ResolveOverlays) and the previews (DisruptionClaims,
// PlanningInput, PoolNodes).
type Activities struct {
	Provisioning *Provisioning
	Launch       *Launch
	Lifecycle    *Lifecycle
	Drain        *Drain
	Disruption   *Disruption
	Interruption *Interruption
	Gang         *Gang
	GC           *GC
	// Headroom is the leader's check of the capacity buffers (the
	// provisioner calls it every resync while any is configured).
	Headroom *Headroom

	ledger      *capacity.Ledger
	prices      *capacity.Prices
	nominations *capacity.Nominations
	snapshots   *snapshots
	pools       *pools
	shared      sharedState
}

// solving is what the activities that plan with the solver over a
// snapshot, and write the NodeClaims it plans, need (Provisioning, Gang).
type solving struct {
	cluster      *kube.Cluster
	market       *catalog.Market // capacity reservations left
	metrics      *metrics.Metrics
	log          *zap.Logger
	solverBudget time.Duration
	snapshots    *snapshots
	claims       *claimWriter
}

// Provisioning plans new capacity: the solver over a snapshot, and the
// NodeClaims it writes (a static NodePool's too).
type Provisioning struct {
	solving
	ledger   *capacity.Ledger   // each plan's outcome
	headroom *capacity.Headroom // virtual pods left unschedulable
}

// Launch turns one NodeClaim into an EC2 instance: offerings, subnets,
// launch templates, CreateFleet.
type Launch struct {
	cluster      *kube.Cluster
	cloud        *aws.Client
	types        capacity.InstanceTypes
	market       *catalog.Market
	ice          *aws.ICECache
	metrics      *metrics.Metrics
	log          *zap.Logger
	clusterFacts bootstrap.Cluster
	pools        *pools // the NodeClaim's pool, for its NodeOverlays
	subnets      subnetPicker
	templates    templateCache
	events       *events // the Events of a launch's waits (an instance profile)
}

// Lifecycle carries a NodeClaim from launched to registered and
// initialized, and through termination: finalizers, volumes, the instance.
type Lifecycle struct {
	cluster *kube.Cluster
	cloud   *aws.Client
	types   capacity.InstanceTypes // a launched type's labels and shape
	metrics *metrics.Metrics
	log     *zap.Logger
	pools   *pools
	// hinting says whether pending pods are pointed at their nodes: a
	// node launched for pods then registers closed (lifecycle.HoldOpening).
	hinting func() bool
	// openingDeadline bounds how long a Ready node stays closed
	// (lifecycle.OpeningDeadline; shorter in tests).
	openingDeadline time.Duration
}

// Drain evicts a node's pods, tier by tier (policy/drain).
type Drain struct {
	cluster *kube.Cluster
	log     *zap.Logger
	// protection is do-not-disrupt for a pod at a time, an invalid value
	// reported on the pod once.
	protection func(context.Context, *corev1.Pod, time.Time) disruption.Protection
}

// Disruption finds, checks and carries out disruptions: candidates,
// consolidation, replacements, the disrupted taint.
type Disruption struct {
	cluster       *kube.Cluster
	metrics       *metrics.Metrics
	log           *zap.Logger
	spotToSpot    bool
	solverBudget  time.Duration
	catalogSource func() string       // Deps.CatalogStatus (nil: none said)
	pseudonym     func(string) string // nil: identifiers in clear
	snapshots     *snapshots
	pools         *pools
	claims        *claimWriter
	events        *events
	prices        *capacity.Prices
	nominations   *capacity.Nominations
	ledger        *capacity.Ledger // pods left to plan hold consolidation
	// market is the live catalog drift checks the classes' instance types
	// and offerings against (disruption.ClassOfferings).
	market *catalog.Market

	// blocked is the last pass's count of blocked nodes by reason (the
	// summary log line is written when it changes).
	blockedMu sync.Mutex
	blocked   map[string]int
}

// Interruption acts on an EC2 interruption notice.
type Interruption struct {
	cluster   *kube.Cluster
	ice       *aws.ICECache
	market    *catalog.Market
	metrics   *metrics.Metrics
	log       *zap.Logger
	pseudonym func(string) string // nil: identifiers in clear
}

// Gang plans and books ProvisioningRequests' capacity all or nothing.
type Gang struct {
	solving
	cloud *aws.Client // a gang's cluster placement groups
}

// GC collects instances, NodeClaims and launch templates nothing owns: it
// needs the adapters and settings alone, not the solver's snapshot.
type GC struct {
	cluster         *kube.Cluster
	cloud           *aws.Client
	metrics         *metrics.Metrics
	log             *zap.Logger
	clusterName     string
	launchTemplates LaunchTemplates // nil: none collected
}

// New builds every saga's activities from d: the parts they share are
// made once here, and each saga gets only those it uses.
func New(d Deps) *Activities {
	types := capacity.InstanceTypes{Embedded: d.Catalog, Market: d.Market}
	pools := &pools{cluster: d.Cluster, market: d.Market, metrics: d.Metrics, log: d.Log}
	prices := capacity.NewPrices(types.Get, func() *catalog.Market { return d.Market }, pools.nodePool)
	noms := capacity.NewNominations(d.Cluster, d.NominationWindow, booked)
	ledger := capacity.NewLedger(d.State, d.Log, d.Cluster.ProvisionablePods, noms.Waiting, noms.Window)
	headroom := capacity.NewHeadroom(d.Metrics)
	events := &events{cluster: d.Cluster, log: d.Log}
	snaps := &snapshots{cluster: d.Cluster, types: types, market: d.Market, ice: d.ICE, staticCapacity: d.StaticCapacity,
		minValuesBestEffort: d.MinValuesPolicy == MinValuesPolicyBestEffort,
		spread:              d.SpreadDefaults, nominations: noms, prices: prices, pools: pools,
		buffers: &buffers{cluster: d.Cluster, log: d.Log, events: events, gate: d.CapacityBuffer}}
	claims := &claimWriter{cluster: d.Cluster, log: d.Log, registrationTTL: d.RegistrationTTL, private: d.Pseudonym != nil}
	solve := solving{cluster: d.Cluster, market: d.Market, metrics: d.Metrics, log: d.Log, solverBudget: d.SolverBudget,
		snapshots: snaps, claims: claims}
	return &Activities{
		Provisioning: &Provisioning{solving: solve, ledger: ledger, headroom: headroom},
		Launch: &Launch{cluster: d.Cluster, cloud: d.Cloud, types: types, market: d.Market, ice: d.ICE, metrics: d.Metrics, log: d.Log,
			clusterFacts: d.ClusterFacts, pools: pools, events: events},
		Lifecycle: &Lifecycle{cluster: d.Cluster, cloud: d.Cloud, types: types, metrics: d.Metrics, log: d.Log, pools: pools,
			hinting: noms.Hinting, openingDeadline: lifecycle.OpeningDeadline},
		Drain: &Drain{cluster: d.Cluster, log: d.Log, protection: events.podProtection},
		Disruption: &Disruption{cluster: d.Cluster, metrics: d.Metrics, log: d.Log, spotToSpot: d.SpotToSpotConsolidation,
			solverBudget: d.SolverBudget, catalogSource: d.CatalogStatus, pseudonym: d.Pseudonym, snapshots: snaps, pools: pools,
			claims: claims, events: events, prices: prices, nominations: noms, ledger: ledger, market: d.Market},
		Interruption: &Interruption{cluster: d.Cluster, ice: d.ICE, market: d.Market, metrics: d.Metrics, log: d.Log, pseudonym: d.Pseudonym},
		Gang:         &Gang{solving: solve, cloud: d.Cloud},
		GC: &GC{cluster: d.Cluster, cloud: d.Cloud, metrics: d.Metrics, log: d.Log, clusterName: d.ClusterName,
			launchTemplates: d.LaunchTemplates},
		Headroom: &Headroom{cluster: d.Cluster, metrics: d.Metrics, log: d.Log, gate: d.CapacityBuffer, snapshots: snaps,
			events: events, state: headroom},
		ledger: ledger, prices: prices, snapshots: snaps, pools: pools, nominations: noms,
		shared: sharedState{state: d.State, ice: d.ICE, log: d.Log, ledger: ledger, market: d.Market},
	}
}

// Ledger is the pending-pod ledger the plans write and the provisioner and
// consolidation read.
func (a *Activities) Ledger() *capacity.Ledger { return a.ledger }

// Nominations says which pending pods the live NodeClaims were launched
// for (the plans' view, which the controller's scheduler hints follow).
func (a *Activities) Nominations() *capacity.Nominations { return a.nominations }

// Prices prices nodes after the NodeOverlays the last snapshot resolved.
func (a *Activities) Prices() *capacity.Prices { return a.prices }

// ResolveOverlays resolves the watched NodeOverlays against the NodePools
// as they are now, for the leader to report each overlay's verdict.
func (a *Activities) ResolveOverlays() ([]*v1alpha1.NodeOverlay, *overlay.Set) {
	return a.snapshots.resolveOverlays()
}

// BindSharedState makes the ICE cache and the pending-pod ledger the same
// on every replica and across restarts (see sharedState.bind). Call it
// before Deps.State starts.
func (a *Activities) BindSharedState() { a.shared.bind() }

// EnableLaunchTemplateGC lets garbage collection delete the launch
// templates the Launch activities made that no launch needs any more
// (templateGC, which also empties Launch's template cache). Call it
// before Register.
func (a *Activities) EnableLaunchTemplateGC() { a.GC.launchTemplates = templateGC{a.Launch} }

// Register registers every activity on a worker under the names the
// workflows use (recorded histories replay against these names).
func (a *Activities) Register(w worker.Registry) {
	reg := func(fn interface{}, name string) {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	p, l, lc, d, i, g, gc := a.Provisioning, a.Launch, a.Lifecycle, a.Disruption, a.Interruption, a.Gang, a.GC
	reg(pulsing(p.PlanProvisioning), workflows.ActivityPlanProvisioning)
	reg(l.LaunchInstance, workflows.ActivityLaunchInstance)
	reg(lc.MarkNodeClaimLaunched, workflows.ActivityMarkLaunched)
	reg(lc.WaitForNodeReady, workflows.ActivityWaitForNode)
	reg(lc.TerminateInstance, workflows.ActivityTerminateInstance)
	reg(lc.DeleteNodeClaim, workflows.ActivityDeleteNodeClaim)
	reg(lc.RecordEvent, workflows.ActivityRecordEvent)
	reg(d.CheckDisruptionCandidate, workflows.ActivityCheckCandidate)
	reg(d.TaintNodeDisrupted, workflows.ActivityTaintDisrupted)
	reg(d.PlanReplacement, workflows.ActivityPlanReplacement)
	reg(lc.WaitNodeClaimReady, workflows.ActivityWaitNodeClaimReady)
	reg(a.Drain.DrainStep, workflows.ActivityDrainStep)
	reg(a.Drain.DeleteNodePods, workflows.ActivityDeleteNodePods)
	reg(lc.WaitNodeClaimGone, workflows.ActivityWaitNodeClaimGone)
	reg(lc.BeginTermination, workflows.ActivityBeginTermination)
	reg(lc.WaitVolumesDetached, workflows.ActivityWaitVolumesDetached)
	reg(lc.RemoveTerminationFinalizers, workflows.ActivityRemoveFinalizers)
	reg(i.LookupInterruptedInstance, workflows.ActivityLookupInterruptedInstance)
	reg(i.MarkOfferingUnavailable, workflows.ActivityMarkOfferingUnavailable)
	reg(i.RecordInterruption, workflows.ActivityRecordInterruption)
	reg(pulsing(d.ComputeDisruption), workflows.ActivityComputeDisruption)
	reg(pulsing(d.ValidateDisruption), workflows.ActivityValidateDisruption)
	reg(d.CheckDisruptionCandidates, workflows.ActivityCheckCandidates)
	reg(pulsing(d.RecheckConsolidation), workflows.ActivityRecheckConsolidation)
	reg(d.CreateReplacement, workflows.ActivityCreateReplacement)
	reg(pulsing(gc.PlanGarbageCollection), workflows.ActivityPlanGarbageCollection)
	reg(gc.CollectInstances, workflows.ActivityCollectInstances)
	reg(gc.CollectNodeClaims, workflows.ActivityCollectNodeClaims)
	reg(gc.CollectLaunchTemplates, workflows.ActivityCollectLaunchTemplates)
	reg(gc.CollectPlacementGroups, workflows.ActivityCollectPlacementGroups)
	reg(pulsing(g.PlanGang), workflows.ActivityPlanGang)
	reg(g.WaitGangReady, workflows.ActivityWaitGangReady)
	reg(g.SetGangStatus, workflows.ActivitySetGangStatus)
	reg(g.BookGang, workflows.ActivityBookGang)
	reg(g.DeleteGangPlacementGroup, workflows.ActivityDeleteGangPlacementGroup)
}
