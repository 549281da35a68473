// Package activities holds Joinery's Temporal activities, one type per saga
// (Provisioning, Launch, Lifecycle, Drain, Disruption, Interruption, Gang,
// GC), registered by New(deps).Register under the names the workflows call
// them by. Activities carry out what a workflow or a policy package
// decided; the rules themselves live in policy/ (disruption, drain,
// minvalues, nodeclass...). They reach EC2 through providers/aws and
// Kubernetes through providers/kube, which makes every write. The sagas
// share one world: the dependencies, the solver snapshot, NodePool lookup
// and the capacity services (capacity.Ledger, capacity.Prices) the
// controller reads too.
package activities

import (
	"context"
	"sync"
	"time"

	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/policy/disruption"
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
// settings every saga reads.
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
	// cluster's launch templates nothing uses (nil: none collected).
	LaunchTemplates LaunchTemplates
	// RegistrationTTL is passed to every NodeClaim saga (0: the default 15 min).
	RegistrationTTL time.Duration
	// NominationWindow: a pending pod nominated to a NodeClaim whose Node
	// has been Ready for longer than this is provisioned again.
	NominationWindow time.Duration
	// SolverBudget bounds each solver.Solve (solver.Input.Budget: 0 is
	// solver.DefaultBudget).
	SolverBudget time.Duration
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

// world is what every saga reads the cluster through: the dependencies, the
// snapshot the solver plans on, NodePool lookup and prices after
// NodeOverlays. The saga types hold it; it holds no activity.
type world struct {
	Deps

	invalidMu sync.Mutex
	invalid   map[string]string // NodePool -> last reported error
	dedupe    eventDedupe       // Events published recently
	prices    *capacity.Prices
	headroom  headroomState
	// ledger is the pending-pod ledger (see Ledger).
	ledgerOnce sync.Once
	ledger     *capacity.Ledger
}

// Activities is every saga's activities over one world, and the shared
// services the controller reads (Ledger, CheckHeadroom, Prices,
// ResolveOverlays). Build it with New.
type Activities struct {
	*world
	Provisioning *Provisioning
	Launch       *Launch
	Lifecycle    *Lifecycle
	Drain        *Drain
	Disruption   *Disruption
	Interruption *Interruption
	Gang         *Gang
	GC           *GC
}

// Provisioning plans new capacity: the solver over a snapshot, and the
// NodeClaims it writes (a static NodePool's too).
type Provisioning struct{ *world }

// Launch turns one NodeClaim into an EC2 instance: offerings, subnets,
// launch templates, CreateFleet.
type Launch struct {
	*world
	subnets   subnetPicker
	templates templateCache
}

// Lifecycle carries a NodeClaim from launched to registered and
// initialized, and through termination: finalizers, volumes, the instance.
type Lifecycle struct{ *world }

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
type Disruption struct{ *world }

// Interruption acts on an EC2 interruption notice.
type Interruption struct {
	cluster   *kube.Cluster
	ice       *aws.ICECache
	metrics   *metrics.Metrics
	log       *zap.Logger
	pseudonym func(string) string // nil: identifiers in clear
}

// Gang plans and books ProvisioningRequests' capacity all or nothing.
type Gang struct{ *world }

// GC collects instances, NodeClaims and launch templates nothing owns: it
// needs the adapters and settings alone, not the solver's snapshot.
type GC struct{ *Deps }

// New builds every saga's activities over one world.
func New(d Deps) *Activities {
	w := &world{Deps: d}
	w.prices = capacity.NewPrices(w.instanceType, func() *catalog.Market { return w.Market }, w.nodePool)
	return &Activities{world: w,
		Provisioning: &Provisioning{w}, Launch: &Launch{world: w}, Lifecycle: &Lifecycle{w},
		Drain:        &Drain{cluster: d.Cluster, log: d.Log, protection: w.podProtection},
		Interruption: &Interruption{cluster: d.Cluster, ice: d.ICE, metrics: d.Metrics, log: d.Log, pseudonym: d.Pseudonym},
		Disruption:   &Disruption{w}, Gang: &Gang{w}, GC: &GC{&w.Deps}}
}

// Register registers every activity on a worker under the names the
// workflows use (recorded histories replay against these names).
func (a *Activities) Register(w worker.Registry) {
	reg := func(fn interface{}, name string) {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	p, l, lc, d, i, g, gc := a.Provisioning, a.Launch, a.Lifecycle, a.Disruption, a.Interruption, a.Gang, a.GC
	reg(p.PlanProvisioning, workflows.ActivityPlanProvisioning)
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
	reg(lc.WaitNodeClaimGone, workflows.ActivityWaitNodeClaimGone)
	reg(lc.BeginTermination, workflows.ActivityBeginTermination)
	reg(lc.WaitVolumesDetached, workflows.ActivityWaitVolumesDetached)
	reg(lc.RemoveTerminationFinalizers, workflows.ActivityRemoveFinalizers)
	reg(i.LookupInterruptedInstance, workflows.ActivityLookupInterruptedInstance)
	reg(i.MarkOfferingUnavailable, workflows.ActivityMarkOfferingUnavailable)
	reg(i.RecordInterruption, workflows.ActivityRecordInterruption)
	reg(d.ComputeDisruption, workflows.ActivityComputeDisruption)
	reg(d.ValidateDisruption, workflows.ActivityValidateDisruption)
	reg(d.CheckDisruptionCandidates, workflows.ActivityCheckCandidates)
	reg(d.RecheckConsolidation, workflows.ActivityRecheckConsolidation)
	reg(d.CreateReplacement, workflows.ActivityCreateReplacement)
	reg(gc.PlanGarbageCollection, workflows.ActivityPlanGarbageCollection)
	reg(gc.CollectInstances, workflows.ActivityCollectInstances)
	reg(gc.CollectNodeClaims, workflows.ActivityCollectNodeClaims)
	reg(gc.CollectLaunchTemplates, workflows.ActivityCollectLaunchTemplates)
	reg(g.PlanGang, workflows.ActivityPlanGang)
	reg(g.WaitGangReady, workflows.ActivityWaitGangReady)
	reg(g.SetGangStatus, workflows.ActivitySetGangStatus)
	reg(g.BookGang, workflows.ActivityBookGang)
}
