package capacity

import (
	"sync"

	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// podRequests keeps each pod's effective requests by UID, for the
// resourceVersion they were read from: the nominations are judged several
// times a second in a burst, over every pending pod and every pod on the
// nodes launched for them, and converting each pod again was a fifth of
// the worker's CPU at 10,000 pods.
type podRequests struct {
	mu    sync.Mutex
	byUID map[types.UID]cachedRequests
}

type cachedRequests struct {
	rv  string
	req resources.List
}

// newPodRequests drops a pod's entry when the cluster's informer deletes
// the pod (cl nil: nothing is dropped, for tests).
func newPodRequests(cl *kube.Cluster) *podRequests {
	r := &podRequests{byUID: map[types.UID]cachedRequests{}}
	if cl != nil && cl.PodInformer != nil {
		_, _ = cl.PodInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: r.drop})
	}
	return r
}

func (r *podRequests) drop(o interface{}) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if p, ok := o.(*corev1.Pod); ok {
		r.mu.Lock()
		delete(r.byUID, p.UID)
		r.mu.Unlock()
	}
}

// of is the pod's effective requests (solver.PodFromK8s's), computed once
// per resourceVersion.
func (r *podRequests) of(p *corev1.Pod) resources.List {
	uid, rv := p.UID, p.ResourceVersion
	if uid == "" || rv == "" {
		return solver.Requests(p)
	}
	r.mu.Lock()
	e, hit := r.byUID[uid]
	r.mu.Unlock()
	if hit && e.rv == rv {
		return e.req
	}
	req := solver.Requests(p)
	r.mu.Lock()
	r.byUID[uid] = cachedRequests{rv: rv, req: req}
	r.mu.Unlock()
	return req
}
