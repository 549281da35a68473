// Package activities holds Joinery's Temporal activities: the only code that
// calls EC2, the Kubernetes API and the solver. Activities carry out what a
// workflow or the solver decided; they hold no decisions of their own.
package activities

import (
	"sync"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/internal/metrics"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
)

// Activities is the set of activity implementations and their dependencies.
type Activities struct {
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

	subnets   subnetPicker
	templates templateCache
	invalidMu sync.Mutex
	invalid   map[string]string // NodePool -> last reported error
	dedupe    eventDedupe       // Events about disruption published recently
	overlays  overlayState
	headroom  headroomState
	// ledger is the pending-pod ledger (see Ledger).
	ledgerOnce sync.Once
	ledger     *PendingLedger
}

// liveCatalog is the catalog to plan with: the Market's live instance
// types (DescribeInstanceTypes) when it has them, else the embedded one.
func (a *Activities) liveCatalog() *catalog.Catalog { return a.Market.Types(a.Catalog) }

// instanceType looks a type up in the live catalog, then in the embedded
// one: a node already running keeps its facts and price even when the
// live answer no longer lists its type.
func (a *Activities) instanceType(name string) (*catalog.InstanceType, bool) {
	if it, ok := a.liveCatalog().Get(name); ok {
		return it, true
	}
	if a.Catalog == nil {
		return nil, false
	}
	return a.Catalog.Get(name)
}

func (a *Activities) catalogStatus() string {
	if a.CatalogStatus == nil {
		return ""
	}
	return a.CatalogStatus()
}

// private reports whether payload encryption is on (see Pseudonym).
func (a *Activities) private() bool { return a.Pseudonym != nil }

// Register registers every activity on a worker under the names the
// workflows use.
func (a *Activities) Register(w worker.Registry) {
	reg := func(fn interface{}, name string) {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	reg(a.PlanProvisioning, workflows.ActivityPlanProvisioning)
	reg(a.LaunchInstance, workflows.ActivityLaunchInstance)
	reg(a.MarkNodeClaimLaunched, workflows.ActivityMarkLaunched)
	reg(a.WaitForNodeReady, workflows.ActivityWaitForNode)
	reg(a.TerminateInstance, workflows.ActivityTerminateInstance)
	reg(a.DeleteNodeClaim, workflows.ActivityDeleteNodeClaim)
	reg(a.RecordEvent, workflows.ActivityRecordEvent)
	reg(a.CheckDisruptionCandidate, workflows.ActivityCheckCandidate)
	reg(a.TaintNodeDisrupted, workflows.ActivityTaintDisrupted)
	reg(a.PlanReplacement, workflows.ActivityPlanReplacement)
	reg(a.WaitNodeClaimReady, workflows.ActivityWaitNodeClaimReady)
	reg(a.DrainStep, workflows.ActivityDrainStep)
	reg(a.WaitNodeClaimGone, workflows.ActivityWaitNodeClaimGone)
	reg(a.BeginTermination, workflows.ActivityBeginTermination)
	reg(a.WaitVolumesDetached, workflows.ActivityWaitVolumesDetached)
	reg(a.RemoveTerminationFinalizers, workflows.ActivityRemoveFinalizers)
	reg(a.LookupInterruptedInstance, workflows.ActivityLookupInterruptedInstance)
	reg(a.MarkOfferingUnavailable, workflows.ActivityMarkOfferingUnavailable)
	reg(a.RecordInterruption, workflows.ActivityRecordInterruption)
	reg(a.ComputeDisruption, workflows.ActivityComputeDisruption)
	reg(a.ValidateDisruption, workflows.ActivityValidateDisruption)
	reg(a.CheckDisruptionCandidates, workflows.ActivityCheckCandidates)
	reg(a.RecheckConsolidation, workflows.ActivityRecheckConsolidation)
	reg(a.CreateReplacement, workflows.ActivityCreateReplacement)
	reg(a.PlanGarbageCollection, workflows.ActivityPlanGarbageCollection)
	reg(a.CollectInstances, workflows.ActivityCollectInstances)
	reg(a.CollectNodeClaims, workflows.ActivityCollectNodeClaims)
	reg(a.CollectLaunchTemplates, workflows.ActivityCollectLaunchTemplates)
	reg(a.PlanGang, workflows.ActivityPlanGang)
	reg(a.WaitGangReady, workflows.ActivityWaitGangReady)
	reg(a.SetGangStatus, workflows.ActivitySetGangStatus)
	reg(a.BookGang, workflows.ActivityBookGang)
}
