// Package kube is Joinery's Kubernetes adapter over client-go: informers
// and an in-memory view of pods, nodes, DaemonSets, volumes (claims,
// PersistentVolumes, StorageClasses, CSINodes), RuntimeClasses, NodePools,
// NodeClaims and EC2NodeClasses, plus the writes Joinery makes (NodeClaims, node labels,
// Events). It holds no decisions.
package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	nodelisters "k8s.io/client-go/listers/node/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Cluster is a started set of informers plus clients for writes.
type Cluster struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface

	factory    informers.SharedInformerFactory
	dynFactory dynamicinformer.DynamicSharedInformerFactory

	Pods        corelisters.PodLister
	PodInformer cache.SharedIndexInformer
	Nodes       corelisters.NodeLister
	DaemonSets  appslisters.DaemonSetLister
	PDBs        policylisters.PodDisruptionBudgetLister
	// VolumeAttachments: a terminating node waits for its volumes to detach.
	VolumeAttachments storagelisters.VolumeAttachmentLister
	// PVCs, PVs and StorageClasses: a pod's volumes constrain its node's
	// zone and count against its attach limit; CSINodes carry each node's
	// attach limit as its CSI drivers report it.
	PVCs           corelisters.PersistentVolumeClaimLister
	PVs            corelisters.PersistentVolumeLister
	StorageClasses storagelisters.StorageClassLister
	CSINodes       storagelisters.CSINodeLister
	// RuntimeClasses: a DaemonSet's template gets its class's overhead, as
	// admission gives it to the DaemonSet's pods (pods that exist carry it).
	RuntimeClasses nodelisters.RuntimeClassLister
	// Namespaces: pod (anti-)affinity namespaceSelectors select by their labels.
	Namespaces corelisters.NamespaceLister
	// Services, ReplicationControllers, ReplicaSets and StatefulSets are
	// nil unless WatchSpreadSelectors was called: what selects a pod is the
	// selector of kube-scheduler's default topology spread constraints.
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister

	nodeInformer cache.SharedIndexInformer
	nodePools    cache.SharedIndexInformer
	nodeClaims   cache.SharedIndexInformer
	claims       converted[apiv1.NodeClaim] // nodeClaims' objects, typed
	pools        converted[apiv1.NodePool]  // nodePools' objects, defaulted and validated
	nodeClasses  cache.SharedIndexInformer
	nodeOverlays cache.SharedIndexInformer // nil unless WatchNodeOverlays
	provReqs     cache.SharedIndexInformer // nil unless WatchProvisioningRequests
	// capacityBuffers: nil unless WatchCapacityBuffers.
	capacityBuffers cache.SharedIndexInformer

	Recorder    record.EventRecorder
	broadcaster record.EventBroadcaster
}

const (
	podsByNodeIndex        = "spec.nodeName"
	daemonPodsByTarget     = "daemonset.target"
	nodesByProviderIDIndex = "spec.providerID"
)

// New builds the clients and informers (resync off: handlers are edge-driven).
func New(cfg *rest.Config) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 200, 400
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return NewFromClients(kc, dc)
}

// NewFromClients builds the informers over given clients (unit tests pass
// client-go's fakes).
func NewFromClients(kc kubernetes.Interface, dc dynamic.Interface) (*Cluster, error) {
	c := &Cluster{Kube: kc, Dynamic: dc}
	c.factory = informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithTransform(trimForCache))
	c.dynFactory = dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	c.PodInformer = c.factory.Core().V1().Pods().Informer()
	if err := c.PodInformer.AddIndexers(cache.Indexers{podsByNodeIndex: func(obj interface{}) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return nil, nil
		}
		return []string{p.Spec.NodeName}, nil
	}, daemonPodsByTarget: func(obj interface{}) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			if node := DaemonPodTarget(p); node != "" {
				return []string{node}, nil
			}
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	c.Pods = c.factory.Core().V1().Pods().Lister()
	c.Nodes = c.factory.Core().V1().Nodes().Lister()
	c.nodeInformer = c.factory.Core().V1().Nodes().Informer()
	if err := c.nodeInformer.AddIndexers(cache.Indexers{nodesByProviderIDIndex: func(obj interface{}) ([]string, error) {
		n, ok := obj.(*corev1.Node)
		if !ok || n.Spec.ProviderID == "" {
			return nil, nil
		}
		return []string{n.Spec.ProviderID}, nil
	}}); err != nil {
		return nil, err
	}
	c.DaemonSets = c.factory.Apps().V1().DaemonSets().Lister()
	c.PDBs = c.factory.Policy().V1().PodDisruptionBudgets().Lister()
	c.VolumeAttachments = c.factory.Storage().V1().VolumeAttachments().Lister()
	c.PVCs = c.factory.Core().V1().PersistentVolumeClaims().Lister()
	c.PVs = c.factory.Core().V1().PersistentVolumes().Lister()
	c.StorageClasses = c.factory.Storage().V1().StorageClasses().Lister()
	c.CSINodes = c.factory.Storage().V1().CSINodes().Lister()
	c.RuntimeClasses = c.factory.Node().V1().RuntimeClasses().Lister()
	c.Namespaces = c.factory.Core().V1().Namespaces().Lister()
	c.nodePools = c.dynFactory.ForResource(apiv1.NodePoolGVR).Informer()
	c.nodeClaims = c.dynFactory.ForResource(apiv1.NodeClaimGVR).Informer()
	c.nodeClasses = c.dynFactory.ForResource(apiv1.EC2NodeClassGVR).Informer()
	for _, inf := range []cache.SharedIndexInformer{c.nodePools, c.nodeClaims, c.nodeClasses} {
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return nil, err
		}
	}
	if err := c.claims.watch(c.nodeClaims); err != nil {
		return nil, err
	}
	c.pools.finish = finishNodePool
	if err := c.pools.watch(c.nodePools); err != nil {
		return nil, err
	}
	c.broadcaster = record.NewBroadcaster()
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kc.CoreV1().Events("")})
	c.Recorder = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "joinery"})
	return c, nil
}

// WatchSpreadSelectors adds the Service, ReplicationController, ReplicaSet
// and StatefulSet informers (call it before Start): only a worker given
// kube-scheduler's default spread constraints reads them, and ReplicaSets
// are many (every Deployment keeps its old ones).
func (c *Cluster) WatchSpreadSelectors() {
	c.Services = c.factory.Core().V1().Services().Lister()
	c.ReplicationControllers = c.factory.Core().V1().ReplicationControllers().Lister()
	c.ReplicaSets = c.factory.Apps().V1().ReplicaSets().Lister()
	c.StatefulSets = c.factory.Apps().V1().StatefulSets().Lister()
}

// Start runs the informers and waits for their caches (up to timeout).
func (c *Cluster) Start(ctx context.Context, timeout time.Duration) error {
	c.factory.Start(ctx.Done())
	c.dynFactory.Start(ctx.Done())
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for t, ok := range c.factory.WaitForCacheSync(wctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %v did not sync within %s", t, timeout)
		}
	}
	for gvr, ok := range c.dynFactory.WaitForCacheSync(wctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %s did not sync within %s (are the CRDs installed?)", gvr.Resource, timeout)
		}
	}
	return nil
}

// Shutdown stops the event broadcaster (informers stop with the context).
func (c *Cluster) Shutdown() { c.broadcaster.Shutdown() }

// NodeByProviderID returns the cached Node with that spec.providerID (nil:
// none yet, or id empty: nodes without one are not indexed), from an
// informer index: NodeClaim lifecycles waiting for their node look it up
// several times a second.
func (c *Cluster) NodeByProviderID(id string) *corev1.Node {
	objs, _ := c.nodeInformer.GetIndexer().ByIndex(nodesByProviderIDIndex, id)
	if len(objs) == 0 {
		return nil
	}
	n, _ := objs[0].(*corev1.Node)
	return n
}

// NodeOfInstance returns the cached Node whose provider ID ends in
// /<instance id> (nil: none).
func (c *Cluster) NodeOfInstance(id string) *corev1.Node {
	if id == "" {
		return nil
	}
	for _, o := range c.nodeInformer.GetStore().List() {
		if n, ok := o.(*corev1.Node); ok && strings.HasSuffix(n.Spec.ProviderID, "/"+id) {
			return n
		}
	}
	return nil
}

// OnNodeEvent and OnNodeClaimEvent add informer event handlers (objects
// are *corev1.Node and *unstructured.Unstructured).
func (c *Cluster) OnNodeEvent(h cache.ResourceEventHandler) {
	_, _ = c.nodeInformer.AddEventHandler(h)
}

// OnNodeClaimEvent: see OnNodeEvent.
func (c *Cluster) OnNodeClaimEvent(h cache.ResourceEventHandler) {
	_, _ = c.nodeClaims.AddEventHandler(h)
}

// PodsOnNode returns the pods bound to a node (from the informer index).
func (c *Cluster) PodsOnNode(node string) []*corev1.Pod {
	return c.podsByIndex(podsByNodeIndex, node)
}

// PendingDaemonPodsFor are the DaemonSet pods made for the node and not
// bound yet (DaemonPodTarget): the scheduler binds them there once there is
// room, so that room is theirs.
func (c *Cluster) PendingDaemonPodsFor(node string) []*corev1.Pod {
	return c.podsByIndex(daemonPodsByTarget, node)
}

func (c *Cluster) podsByIndex(index, key string) []*corev1.Pod {
	objs, _ := c.PodInformer.GetIndexer().ByIndex(index, key)
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod))
	}
	return out
}

// fromUnstructured converts an informer object into one of the api/v1 types.
func fromUnstructured(obj interface{}, into interface{}) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected object %T", obj)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
