package kube

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// converted keeps the typed form of an informer's unstructured objects,
// by UID and resourceVersion: converting every NodeClaim on each read was
// a fifth of the worker's CPU in a 5,000-pod burst. The objects it
// returns are shared by every reader: read-only.
type converted[T any] struct {
	// finish, when set, completes a converted object (defaults) and
	// judges it (validation); its verdict is kept with the object.
	finish func(*T) error

	mu    sync.Mutex
	byUID map[types.UID]convertedObj[T]
}

type convertedObj[T any] struct {
	rv  string
	obj *T
	err error // finish's verdict
}

// watch drops an object's entry when the informer deletes it.
func (c *converted[T]) watch(inf cache.SharedIndexInformer) error {
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.drop})
	return err
}

func (c *converted[T]) drop(o interface{}) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		c.mu.Lock()
		delete(c.byUID, u.GetUID())
		c.mu.Unlock()
	}
}

// get is o as a *T, converted (and finished) once per resourceVersion.
// A conversion error returns no object; finish's error returns the
// object with it.
func (c *converted[T]) get(o interface{}) (*T, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, fromUnstructured(o, nil)
	}
	uid, rv := u.GetUID(), u.GetResourceVersion()
	c.mu.Lock()
	e, hit := c.byUID[uid]
	c.mu.Unlock()
	if hit && rv != "" && e.rv == rv {
		return e.obj, e.err
	}
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, err
	}
	var verdict error
	if c.finish != nil {
		verdict = c.finish(obj)
	}
	if uid != "" && rv != "" {
		c.mu.Lock()
		if c.byUID == nil {
			c.byUID = map[types.UID]convertedObj[T]{}
		}
		c.byUID[uid] = convertedObj[T]{rv: rv, obj: obj, err: verdict}
		c.mu.Unlock()
	}
	return obj, verdict
}
