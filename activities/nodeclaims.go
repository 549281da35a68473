package activities

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/capacity"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/activity"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelProvisionBatch marks the NodeClaims one planning activity wrote
// (see attemptBatch).
const LabelProvisionBatch = "joinery.sh/provision-batch"

// nodeClaimWriters bounds the concurrent NodeClaim creations of one plan.
const nodeClaimWriters = 16

// claimWriter writes the NodeClaims the plans make, each labelled with its
// activity attempt's batch, and discards an earlier attempt's on a retry.
type claimWriter struct {
	cluster         *kube.Cluster
	log             *zap.Logger
	registrationTTL time.Duration // passed to every NodeClaim saga
	private         bool          // payload encryption on: sagas are Private
}

// claimSpec is what a NodeClaim object carries besides its pool's template.
type claimSpec struct {
	batch  string            // LabelProvisionBatch
	labels map[string]string // template labels
	// reqs are the requirements (an instance-type one is replaced by types).
	reqs      []apiv1.NodeSelectorRequirementWithMinValues
	types     []string // instance types, cheapest first
	requests  corev1.ResourceList
	nominated []string // pod UIDs (AnnotationNominatedPods)
	relaxed   bool     // minValues relaxed (AnnotationNodeClaimMinValuesRelaxed)
}

// attemptBatch is the value of LabelProvisionBatch for NodeClaims this
// activity writes: a hash of its workflow run and activity id, the same
// for every attempt ("" outside an activity).
func attemptBatch(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	info := activity.GetInfo(ctx)
	sum := sha256.Sum256([]byte(info.WorkflowExecution.RunID + "/" + info.ActivityID))
	return hex.EncodeToString(sum[:8])
}

// discardEarlierAttempt deletes, on a retry, the NodeClaims an earlier
// attempt of this activity wrote before it failed: no saga was started for
// them (no instance exists), and they would hold their pods' nominations
// forever. It returns the batch label for this attempt's NodeClaims.
func (c *claimWriter) discardEarlierAttempt(ctx context.Context) (string, error) {
	batch := attemptBatch(ctx)
	if batch == "" || activity.GetInfo(ctx).Attempt < 2 {
		return batch, nil
	}
	return batch, c.discardBatch(ctx, batch)
}

// discardBatch deletes the NodeClaims labelled with the batch, listed
// from the API server (the earlier attempt may have written one the cache
// does not have yet), and waits until the cache has dropped them: the
// snapshot this attempt takes next must not count them as capacity.
func (c *claimWriter) discardBatch(ctx context.Context, batch string) error {
	names, err := c.cluster.NodeClaimNames(ctx, LabelProvisionBatch+"="+batch)
	if err != nil {
		return fmt.Errorf("list the NodeClaims of an earlier attempt: %w", err)
	}
	for _, name := range names {
		if err := c.cluster.DeleteNodeClaim(ctx, name); err != nil {
			return fmt.Errorf("discard NodeClaim %s of an earlier attempt: %w", name, err)
		}
		activityLogger(ctx, c.log).Info("nodeclaim of an earlier attempt discarded", zap.String("nodeclaim", name))
	}
	return c.cluster.WaitNodeClaimsGone(ctx, names, cacheWait)
}

// write creates the NodeClaim object for one planned node and returns
// its saga's input.
func (c *claimWriter) write(ctx context.Context, snap *snapshot, batch string, nn solver.NewNodeClaim) (*apiv1.NodeClaim, workflows.NodeClaimInput, error) {
	offs := flattenOfferings(nn)
	if len(offs) == 0 {
		return nil, workflows.NodeClaimInput{}, fmt.Errorf("solver returned nodeclaim for %s without offerings", nn.NodePool)
	}
	var uids []string
	for _, key := range nn.Pods {
		if p := snap.podsByKey[key]; p != nil {
			uids = append(uids, string(p.UID))
		}
	}
	var types []string
	for i, o := range nn.InstanceTypes {
		if i == MaxInstanceTypesPerNodeClaim {
			break
		}
		types = append(types, o.Type.Name)
	}
	labels := nn.Labels
	if len(snap.claimLabels) > 0 {
		labels = maps.Clone(nn.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, snap.claimLabels)
	}
	nc, err := c.create(ctx, snap.pools[nn.NodePool], claimSpec{batch: batch, labels: labels, reqs: nn.Requirements, types: types,
		requests: nn.Requests.ToResourceList(), nominated: uids, relaxed: nn.MinValuesRelaxed})
	if err != nil {
		return nil, workflows.NodeClaimInput{}, err
	}
	return nc, c.sagaInput(nc.Name, nn.NodePool, offs, len(nn.Pods)), nil
}

// sagaInput is the input of the saga of a NodeClaim just written.
func (c *claimWriter) sagaInput(name, pool string, offs []saga.Offering, pods int) workflows.NodeClaimInput {
	return workflows.NodeClaimInput{Name: name, NodePool: pool, Offerings: offs, Pods: pods, RegistrationTTL: c.registrationTTL,
		Private: c.private}
}

// create creates a NodeClaim object of pool np.
func (c *claimWriter) create(ctx context.Context, np *apiv1.NodePool, cs claimSpec) (*apiv1.NodeClaim, error) {
	name := np.Name + "-" + randomSuffix()
	labels := map[string]string{apiv1.LabelNodePool: np.Name, LabelProvisionBatch: cs.batch}
	for k, v := range cs.labels {
		labels[k] = v
	}
	reqs := make([]apiv1.NodeSelectorRequirementWithMinValues, 0, len(cs.reqs)+2)
	for _, r := range cs.reqs {
		if r.Key != apiv1.LabelInstanceType {
			reqs = append(reqs, r)
		}
	}
	reqs = append(reqs, apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.LabelInstanceType, Operator: apiv1.OpIn, Values: cs.types,
		MinValues: typeMinValues(cs.reqs)})
	nc := &apiv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{capacity.AnnotationNominatedPods: strings.Join(cs.nominated, ",")},
			// The termination finalizer: deleting the NodeClaim runs the
			// node's termination before the object goes. Owned by its
			// NodePool, so deleting the pool deletes its NodeClaims
			// (kube-controller-manager's garbage collector).
			Finalizers: []string{apiv1.FinalizerTermination},
		},
		Spec: apiv1.NodeClaimSpec{
			Taints:        np.Spec.Template.Spec.Taints,
			StartupTaints: np.Spec.Template.Spec.StartupTaints,
			Requirements:  reqs,
			// The pods' summed requests (extended resources included: the
			// Node is Initialized only once each shows in its allocatable).
			Resources:              apiv1.ResourceRequirements{Requests: cs.requests},
			NodeClassRef:           np.Spec.Template.Spec.NodeClassRef,
			ExpireAfter:            np.Spec.Template.Spec.ExpireAfter,
			TerminationGracePeriod: np.Spec.Template.Spec.TerminationGracePeriod,
		},
	}
	if np.UID != "" {
		nc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: np.Name, UID: np.UID,
			BlockOwnerDeletion: ptrTrue()}}
	}
	for k, v := range np.Spec.Template.ObjectMeta.Annotations {
		nc.Annotations[k] = v
	}
	// As Karpenter's scheduler writes it on every NodeClaim it makes.
	nc.Annotations[apiv1.AnnotationNodeClaimMinValuesRelaxed] = strconv.FormatBool(cs.relaxed)
	// Drift is a difference between these stamps and the current specs.
	nc.Annotations[disruption.AnnotationNodePoolHash] = disruption.NodePoolHash(np)
	nc.Annotations[disruption.AnnotationNodePoolHashVersion] = disruption.NodePoolHashVersion
	if cls, err := c.cluster.NodeClass(np.Spec.Template.Spec.NodeClassRef.Name); err == nil {
		nc.Annotations[disruption.AnnotationNodeClassHash] = disruption.NodeClassHash(cls)
	}
	if err := c.cluster.CreateNodeClaim(ctx, nc); err != nil {
		return nil, fmt.Errorf("create NodeClaim %s: %w", name, err)
	}
	return nc, nil
}

// typeMinValues is the minValues of the instance-type requirement among
// reqs (nil when none): the NodeClaim keeps it, as Karpenter's do, so the
// launch meets it (launchOfferings).
func typeMinValues(reqs []apiv1.NodeSelectorRequirementWithMinValues) *int {
	for _, r := range reqs {
		if r.Key == apiv1.LabelInstanceType && r.MinValues != nil {
			mv := *r.MinValues
			return &mv
		}
	}
	return nil
}

// flattenOfferings lists a planned node's offerings cheapest first (ties by
// instance type, then zone), capped at MaxOfferingsPerNodeClaim.
func flattenOfferings(nn solver.NewNodeClaim) []saga.Offering {
	return disruption.ReplacementOfferings(nn.InstanceTypes, MaxOfferingsPerNodeClaim)
}

// randomSuffix is the 5-character name suffix Karpenter-style NodeClaims carry.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func ptrTrue() *bool {
	yes := true
	return &yes
}
