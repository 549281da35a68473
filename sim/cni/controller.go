package cni

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// PodIPsAnnotation is where the CNI writes a pod's address (ANNOTATE_POD_IP).
const PodIPsAnnotation = "vpc.amazonaws.com/pod-ips"

// subnetBackoff is how long ipamd waits after EC2 answered
// InsufficientFreeAddressesInSubnet before asking again.
const subnetBackoff = 120 * time.Second

// retrySandbox is how often the kubelet retries a pod sandbox that got no
// address (and repeats its Event).
const retrySandbox = 10 * time.Second

// Cloud is the EC2 side ipamd talks to: the instance's type and the
// addresses and /28 prefixes it holds (instance metadata), and addresses
// taken from or given back to its subnet.
type Cloud interface {
	Instance(id string) (instanceType string, secondary []string, ok bool)
	Prefixes(id string) []string
	AssignAddresses(id string, n int) ([]string, error)
	UnassignAddresses(id string, ips []string)
	UnassignPrefixes(id string, prefixes []string)
}

// Options configure the CNI.
type Options struct {
	Kube  kubernetes.Interface
	Cloud Cloud
	// Limits is EC2's description of an instance type's network limits.
	Limits   func(instanceType string) (Limits, bool)
	Settings Settings
	Log      *zap.Logger
}

// CNI runs ipamd for every Node whose providerID names a local instance.
type CNI struct {
	o     Options
	pods  listerscorev1.PodLister
	podIx cache.Indexer
	nodes listerscorev1.NodeLister
	queue workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	state map[string]*nodeState // node name -> ipamd's datastore
}

// Start runs the CNI until ctx ends.
func Start(ctx context.Context, o Options) (*CNI, error) {
	o.Settings = o.Settings.withDefaults()
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	f := informers.NewSharedInformerFactory(o.Kube, 0)
	podInf, nodeInf := f.Core().V1().Pods(), f.Core().V1().Nodes()
	c := &CNI{o: o, pods: podInf.Lister(), nodes: nodeInf.Lister(), state: map[string]*nodeState{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	if err := podInf.Informer().AddIndexers(cache.Indexers{"node": func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	c.podIx = podInf.Informer().GetIndexer()
	enqueuePod := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			c.queue.Add(p.Spec.NodeName)
		}
	}
	enqueueNode := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if n, ok := obj.(*corev1.Node); ok {
			c.queue.Add(n.Name)
		}
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueuePod, UpdateFunc: func(_, n any) { enqueuePod(n) }, DeleteFunc: enqueuePod}); err != nil {
		return nil, err
	}
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueNode, UpdateFunc: func(_, n any) { enqueueNode(n) }, DeleteFunc: enqueueNode}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	go func() {
		f.WaitForCacheSync(ctx.Done())
		go func() { <-ctx.Done(); c.queue.ShutDown() }()
		for c.next(ctx) {
		}
	}()
	return c, nil
}

func (c *CNI) next(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if after := c.reconcile(ctx, name); after > 0 {
		c.queue.AddAfter(name, after)
	}
	c.queue.Forget(name)
	return true
}

// instanceID is the instance of providerID aws:///<zone>/<id>.
func instanceID(providerID string) string {
	if !strings.HasPrefix(providerID, "aws:///") {
		return ""
	}
	return providerID[strings.LastIndex(providerID, "/")+1:]
}

// podsOn are the node's pods that need a pod address: not hostNetwork,
// not finished.
func (c *CNI) podsOn(node string) map[types.UID]*corev1.Pod {
	objs, _ := c.podIx.ByIndex("node", node)
	out := map[types.UID]*corev1.Pod{}
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out[p.UID] = p
	}
	return out
}
