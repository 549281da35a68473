package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
)

// nodeClassReconciler resolves each EC2NodeClass's selector terms into its
// status (subnets, security groups, images, instance profile) with
// conditions, as Karpenter's nodeclass controller does, and cleans up what
// it created when a class is deleted. Its errors are the conditions'
// messages, a Warning Event on the class and a log line.
type nodeClassReconciler struct {
	cl      *kube.Cluster
	cloud   *aws.Client
	cluster string // cluster name
	region  string
	log     *zap.Logger
	ready   *prometheus.GaugeVec
	// subnetIPs is each resolved subnet's free addresses as last described.
	subnetIPs *prometheus.GaugeVec
	queue     workqueue.TypedRateLimitingInterface[string]
	k8s       string // "1.37", read once
	resync    time.Duration
	// blockExpiration is Config.CapacityBlockExpiration.
	blockExpiration time.Duration
	// kubeletCEL is the NodeClassCEL feature gate: off, a class with a
	// kubelet expression is refused.
	kubeletCEL bool
	// poolChanged is signalled when a NodePool's spec changes
	// (markDriftOnPoolChange).
	poolChanged chan struct{}
	// market is the live catalog drift checks the class's instance types
	// and offerings against (nil: none, no InstanceTypeNotFound drift).
	market *catalog.Market
}

func newNodeClassReconciler(cl *kube.Cluster, cc *aws.Client, cfg Config, reg prometheus.Registerer, log *zap.Logger) *nodeClassReconciler {
	r := &nodeClassReconciler{
		cl: cl, cloud: cc, cluster: cfg.ClusterName, region: cfg.Region, log: log.Named("nodeclass"), resync: cfg.NodeClassResync,
		blockExpiration: cfg.CapacityBlockExpiration, kubeletCEL: cfg.FeatureGates.NodeClassCEL,
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_nodeclass_ready",
			Help: "1 when the EC2NodeClass is Ready (every selector resolved), else 0."}, []string{"nodeclass"}),
		subnetIPs: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "joinery_subnet_available_ips",
			Help: "Free IPv4 addresses of each subnet an EC2NodeClass resolves, as DescribeSubnets last reported them."}, []string{"subnet"}),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 5*time.Minute)),
	}
	if r.resync <= 0 {
		r.resync = DefaultNodeClassResync
	}
	reg.MustRegister(r.ready, r.subnetIPs)
	cl.OnNodeClassChange(r.queue.Add)
	r.poolChanged = make(chan struct{}, 1)
	cl.OnNodePoolSpecChange(func() {
		select {
		case r.poolChanged <- struct{}{}:
		default:
		}
	})
	return r
}

// run reconciles until ctx ends: on every change, and every class each
// resync; the drift of NodeClaims is judged again on each, and when a
// NodePool's spec changes.
func (r *nodeClassReconciler) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	go r.markDriftOnPoolChange(ctx)
	// Every class now, then again each resync (no trigger: changes come
	// through the queue).
	go reconcileLoop(ctx, r.resync, nil, 0, func(context.Context, time.Time) {
		for _, c := range r.cl.NodeClasses() {
			r.queue.Add(c.Name)
		}
	})
	for {
		name, shutdown := r.queue.Get()
		if shutdown {
			return
		}
		if err := r.reconcile(ctx, name); err != nil {
			r.log.Warn("reconcile EC2NodeClass", zap.String("nodeclass", name), zap.Error(err))
			r.queue.AddRateLimited(name)
		} else {
			r.queue.Forget(name)
		}
		r.queue.Done(name)
	}
}

func (r *nodeClassReconciler) reconcile(ctx context.Context, name string) error {
	cls, err := r.cl.NodeClass(name)
	if err != nil {
		r.ready.DeleteLabelValues(name)
		return nil // deleted
	}
	if cls.DeletionTimestamp != nil {
		return r.finalize(ctx, cls)
	}
	if !slices.Contains(cls.Finalizers, apiv1.FinalizerNodeClassTermination) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"finalizers": append(cls.Finalizers, apiv1.FinalizerNodeClassTermination), "resourceVersion": cls.ResourceVersion}})
		if err := r.cl.PatchNodeClass(ctx, name, patch); err != nil {
			return fmt.Errorf("add finalizer: %w", err)
		}
	}
	var res nodeclass.Resolution
	res.Subnets, res.SubnetsErr = r.subnets(ctx, cls)
	res.SecurityGroups, res.SecurityGroupsErr = r.securityGroups(ctx, cls)
	res.AMIs, res.AMIsErr = r.amis(ctx, cls)
	res.InstanceProfile, res.InstanceProfileErr = r.instanceProfile(ctx, cls)
	res.CapacityReservations, res.CapacityReservationsErr = r.capacityReservations(ctx, cls)
	res.PlacementGroupSelector = cls.Spec.PlacementGroupSelector
	res.PlacementGroup, res.PlacementGroupErr = r.placementGroup(ctx, cls, res.Subnets)
	res.Unsupported = append(nodeclass.Unsupported(&cls.Spec), nodeclass.KubeletGated(&cls.Spec, r.kubeletCEL)...)
	st := nodeclass.Status(cls.Status.Conditions, res, cls.Generation, metav1.Now())
	r.report(cls, st)
	defer func() {
		live := *cls
		live.Status = st
		r.markDrift(ctx, &live)
		r.hydrate(ctx, cls.Name)
	}()
	if reflect.DeepEqual(normalized(st), normalized(cls.Status)) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	if err := r.cl.PatchNodeClassStatus(ctx, name, patch); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// report sets the metric, and on a change of Ready logs and records an Event.
func (r *nodeClassReconciler) report(cls *apiv1.EC2NodeClass, st apiv1.EC2NodeClassStatus) {
	now := apiv1.FindCondition(st.Conditions, apiv1.ConditionReady)
	was := apiv1.FindCondition(cls.Status.Conditions, apiv1.ConditionReady)
	v := 0.0
	if now.Status == metav1.ConditionTrue {
		v = 1
	}
	r.ready.WithLabelValues(cls.Name).Set(v)
	if was != nil && was.Status == now.Status && was.Message == now.Message {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: cls.Name, UID: cls.UID}
	if now.Status == metav1.ConditionTrue {
		r.log.Info("EC2NodeClass ready", zap.String("nodeclass", cls.Name), zap.Int("subnets", len(st.Subnets)),
			zap.Int("securityGroups", len(st.SecurityGroups)), zap.Int("amis", len(st.AMIs)), zap.String("instanceProfile", st.InstanceProfile))
		r.cl.Recorder.Event(ref, corev1.EventTypeNormal, "Ready", "EC2NodeClass resolved")
		return
	}
	r.log.Warn("EC2NodeClass not ready", zap.String("nodeclass", cls.Name), zap.String("reason", now.Reason), zap.String("message", now.Message))
	r.cl.Recorder.Event(ref, corev1.EventTypeWarning, now.Reason, now.Message)
}

// normalized drops transition times, so a status only differing in them
// (never, by construction) or in nothing is not written again.
func normalized(st apiv1.EC2NodeClassStatus) apiv1.EC2NodeClassStatus {
	out := st
	out.Conditions = nil
	for _, c := range st.Conditions {
		c.LastTransitionTime = metav1.Time{}
		out.Conditions = append(out.Conditions, c)
	}
	return out
}

func (r *nodeClassReconciler) subnets(ctx context.Context, cls *apiv1.EC2NodeClass) ([]apiv1.SubnetStatus, error) {
	sns, err := r.cloud.Subnets(ctx, cls.Spec.SubnetSelectorTerms)
	if err != nil {
		return nil, err
	}
	out := make([]apiv1.SubnetStatus, 0, len(sns))
	for _, s := range aws.SortByFreeAddresses(sns) {
		out = append(out, apiv1.SubnetStatus{ID: s.ID, Zone: s.Zone, ZoneID: s.ZoneID})
		r.subnetIPs.WithLabelValues(s.ID).Set(float64(s.AvailableIPs))
	}
	return out, nil
}

// placementGroup resolves the class's placement group selector (nil: none
// set, or EC2 has no such group), with a cluster group's zone
// (nodeclass.ClusterZone).
func (r *nodeClassReconciler) placementGroup(ctx context.Context, cls *apiv1.EC2NodeClass, subnets []apiv1.SubnetStatus) (*apiv1.PlacementGroupStatus, error) {
	sel := cls.Spec.PlacementGroupSelector
	if sel == nil {
		return nil, nil
	}
	pg, err := r.cloud.PlacementGroup(ctx, sel)
	if err != nil || pg == nil || pg.Strategy != apiv1.PlacementStrategyCluster {
		return pg, err
	}
	running, err := r.cloud.PlacementGroupZones(ctx, pg.Name)
	if err != nil {
		return nil, err
	}
	pg.Zone = nodeclass.ClusterZone(running, subnets, pg.ID, cls.Status.PlacementGroup)
	return pg, nil
}

func (r *nodeClassReconciler) securityGroups(ctx context.Context, cls *apiv1.EC2NodeClass) ([]apiv1.SecurityGroupStatus, error) {
	gs, err := r.cloud.SecurityGroups(ctx, cls.Spec.SecurityGroupSelectorTerms)
	if err != nil {
		return nil, err
	}
	out := make([]apiv1.SecurityGroupStatus, 0, len(gs))
	for _, g := range gs {
		out = append(out, apiv1.SecurityGroupStatus{ID: g.ID, Name: g.Name})
	}
	return out, nil
}

// capacityReservations resolves spec.capacityReservationSelectorTerms
// through DescribeCapacityReservations (no call when there are none);
// reservations left out are logged with why.
func (r *nodeClassReconciler) capacityReservations(ctx context.Context, cls *apiv1.EC2NodeClass) ([]apiv1.CapacityReservationStatus, error) {
	terms := cls.Spec.CapacityReservationSelectorTerms
	if len(terms) == 0 || len(apiv1.ValidateCapacityReservationTerms(terms, nil)) > 0 {
		return nil, nil // invalid terms: ValidationSucceeded=False says why
	}
	found, err := r.cloud.CapacityReservations(ctx, terms)
	if err != nil {
		return nil, err
	}
	out, skipped := nodeclass.SelectReservations(found, time.Now(), r.blockExpiration)
	if len(skipped) > 0 {
		r.log.Info("capacity reservations not used", zap.String("nodeclass", cls.Name), zap.Strings("skipped", skipped))
	}
	return out, nil
}

// amis resolves an alias through EKS's public SSM parameters, other terms
// through DescribeImages, and keeps the newest image per requirement set.
func (r *nodeClassReconciler) amis(ctx context.Context, cls *apiv1.EC2NodeClass) ([]apiv1.AMIStatus, error) {
	terms := cls.Spec.AMISelectorTerms
	if len(terms) == 1 && terms[0].Alias != "" {
		return r.aliasAMIs(ctx, terms[0].Alias)
	}
	if len(terms) == 0 {
		return nil, errors.New("spec.amiSelectorTerms is empty")
	}
	var cands []nodeclass.Candidate
	for i, t := range terms {
		if t.Alias != "" {
			return nil, fmt.Errorf("spec.amiSelectorTerms[%d]: an alias must be the only term", i)
		}
		q, ok, err := r.termQuery(ctx, cls, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		imgs, err := r.cloud.DescribeImages(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, img := range imgs {
			cands = append(cands, nodeclass.Candidate{Image: toImage(img)})
		}
	}
	return nodeclass.SelectAMIs(cands), nil
}

// termQuery is the DescribeImages query of one term (false: the term
// selects nothing). A term with an SSM parameter selects the image it holds,
// whatever else it says, as Karpenter's does.
func (r *nodeClassReconciler) termQuery(ctx context.Context, cls *apiv1.EC2NodeClass, t apiv1.AMISelectorTerm) (aws.ImageQuery, bool, error) {
	if t.SSMParameter != "" {
		id, ok, err := r.parameterImage(ctx, cls, t.SSMParameter)
		return aws.ImageQuery{IDs: []string{id}}, ok, err
	}
	q := aws.ImageQuery{Tags: t.Tags}
	if t.ID != "" {
		q.IDs = []string{t.ID}
	}
	if t.Name != "" {
		q.Names = []string{t.Name}
		q.Owners = []string{"self", "amazon"}
	}
	if t.Owner != "" {
		q.Owners = []string{t.Owner}
	}
	return q, true, nil
}

// parameterImage reads a term's own SSM parameter as Karpenter does: a
// parameter that does not exist, or whose value is not an image id, selects
// nothing (logged); any other error (the worker's policy not allowing
// ssm:GetParameter on it) fails the resolution.
func (r *nodeClassReconciler) parameterImage(ctx context.Context, cls *apiv1.EC2NodeClass, name string) (string, bool, error) {
	id, found, err := r.cloud.GetParameter(ctx, name)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("amiSelectorTerms ssmParameter %s: %w", name, err)
	case !found:
		r.log.Info("AMI selector term's SSM parameter not found", zap.String("nodeclass", cls.Name), zap.String("ssmParameter", name))
		return "", false, nil
	case !strings.HasPrefix(id, "ami-"):
		r.log.Info("AMI selector term's SSM parameter is not an image id", zap.String("nodeclass", cls.Name),
			zap.String("ssmParameter", name), zap.String("value", id))
		return "", false, nil
	}
	return id, true, nil
}

func (r *nodeClassReconciler) aliasAMIs(ctx context.Context, s string) ([]apiv1.AMIStatus, error) {
	alias, err := nodeclass.ParseAlias(s)
	if err != nil {
		return nil, err
	}
	version, err := r.kubernetesVersion()
	if err != nil {
		return nil, err
	}
	params, err := alias.Parameters(version)
	if err != nil {
		return nil, err
	}
	variants := map[string][]string{}
	var ids []string
	for _, p := range params {
		id, found, err := r.cloud.GetParameter(ctx, p.Path)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if _, seen := variants[id]; !seen {
			ids = append(ids, id)
		}
		variants[id] = append(variants[id], p.Variants...)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("alias %s: none of the %d SSM parameters for Kubernetes %s exists", s, len(params), version)
	}
	imgs, err := r.cloud.DescribeImages(ctx, aws.ImageQuery{IDs: ids})
	if err != nil {
		return nil, err
	}
	var cands []nodeclass.Candidate
	for _, img := range imgs {
		cands = append(cands, nodeclass.Candidate{Image: toImage(img), Variants: variants[img.ID]})
	}
	return nodeclass.SelectAMIs(cands), nil
}

func toImage(i aws.Image) nodeclass.Image {
	return nodeclass.Image{ID: i.ID, Name: i.Name, Architecture: i.Architecture, CreationDate: i.CreationDate, Deprecated: i.Deprecated}
}

// kubernetesVersion is the API server's "major.minor", read once.
func (r *nodeClassReconciler) kubernetesVersion() (string, error) {
	if r.k8s != "" {
		return r.k8s, nil
	}
	v, err := r.cl.Kube.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("kubernetes version: %w", err)
	}
	r.k8s = v.Major + "." + strings.TrimRight(v.Minor, "+")
	return r.k8s, nil
}

// instanceProfile takes spec.instanceProfile as given, or creates (and
// keeps pointing at spec.role) the class's own profile.
func (r *nodeClassReconciler) instanceProfile(ctx context.Context, cls *apiv1.EC2NodeClass) (string, error) {
	if cls.Spec.InstanceProfile != "" {
		return cls.Spec.InstanceProfile, nil
	}
	if cls.Spec.Role == "" {
		return "", nil
	}
	p := aws.InstanceProfile{
		Name: nodeclass.InstanceProfileName(r.cluster, r.region, string(cls.UID), cls.Spec.Role),
		Path: nodeclass.InstanceProfilePath(r.cluster, r.region, string(cls.UID)),
		Role: cls.Spec.Role,
		Tags: r.profileTags(cls),
	}
	if err := r.cloud.EnsureInstanceProfile(ctx, p); err != nil {
		return "", fmt.Errorf("instance profile for role %s: %w", cls.Spec.Role, err)
	}
	return p.Name, nil
}

func (r *nodeClassReconciler) profileTags(cls *apiv1.EC2NodeClass) map[string]string {
	tags := map[string]string{}
	for k, v := range cls.Spec.Tags {
		tags[k] = v
	}
	for k, v := range nodeclass.OwnershipTags(r.cluster, cls.Name) {
		tags[k] = v
	}
	tags[apiv1.LabelRegion] = r.region
	return tags
}

// finalize waits until no NodeClaim uses the class, then deletes the
// instance profile and launch templates Joinery made for it and lets the
// class go.
func (r *nodeClassReconciler) finalize(ctx context.Context, cls *apiv1.EC2NodeClass) error {
	if !slices.Contains(cls.Finalizers, apiv1.FinalizerNodeClassTermination) {
		return nil
	}
	for _, nc := range r.cl.NodeClaims() {
		if nc.Spec.NodeClassRef != nil && nc.Spec.NodeClassRef.Name == cls.Name {
			return fmt.Errorf("EC2NodeClass %s is deleting but NodeClaim %s still uses it", cls.Name, nc.Name)
		}
	}
	if cls.Spec.InstanceProfile == "" && cls.Status.InstanceProfile != "" {
		if err := r.cloud.DeleteInstanceProfile(ctx, cls.Status.InstanceProfile); err != nil {
			return err
		}
	}
	lts, err := r.cloud.LaunchTemplates(ctx)
	if err != nil {
		return err
	}
	for _, lt := range lts {
		if lt.Tags[nodeclass.TagNodeClass] == cls.Name {
			if err := r.cloud.DeleteLaunchTemplate(ctx, lt.ID); err != nil {
				return err
			}
		}
	}
	var keep []string
	for _, f := range cls.Finalizers {
		if f != apiv1.FinalizerNodeClassTermination {
			keep = append(keep, f)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep, "resourceVersion": cls.ResourceVersion}})
	if err := r.cl.PatchNodeClass(ctx, cls.Name, patch); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	r.log.Info("EC2NodeClass finalized", zap.String("nodeclass", cls.Name))
	return nil
}
