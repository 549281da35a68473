package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/joinery/joinery/policy/sharedstate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// StateStore keeps the state worker replicas share in ConfigMaps of one
// namespace (the worker's own), labelled joinery.sh/shared-state: read
// through an informer (no API call on the hot path), added to with JSON
// merge patches (no read-modify-write, so concurrent writers do not
// conflict), pruned with a resourceVersion precondition (a prune that
// raced a write is dropped, never the write).
type StateStore struct {
	kube      kubernetes.Interface
	namespace string
	factory   informers.SharedInformerFactory
	informer  cache.SharedIndexInformer

	mu       sync.Mutex
	handlers map[string][]func(map[string]string)
}

// NewStateStore watches the shared-state ConfigMaps of namespace.
func NewStateStore(kc kubernetes.Interface, namespace string) *StateStore {
	s := &StateStore{kube: kc, namespace: namespace, handlers: map[string][]func(map[string]string){}}
	s.factory = informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sharedstate.Label }),
		informers.WithTransform(stripManagedFields))
	s.informer = s.factory.Core().V1().ConfigMaps().Informer()
	notify := func(obj interface{}) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		s.mu.Lock()
		hs := append([]func(map[string]string){}, s.handlers[cm.Name]...)
		s.mu.Unlock()
		for _, h := range hs {
			h(cm.Data)
		}
	}
	_, _ = s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n interface{}) { notify(n) },
	})
	return s
}

// Namespace is where the ConfigMaps live.
func (s *StateStore) Namespace() string { return s.namespace }

// OnChange calls fn with the data of ConfigMap name whenever the informer
// sees it added or changed (register before Start to get the first copy).
func (s *StateStore) OnChange(name string, fn func(data map[string]string)) {
	s.mu.Lock()
	s.handlers[name] = append(s.handlers[name], fn)
	s.mu.Unlock()
}

// Start runs the informer and waits for its cache (up to timeout).
func (s *StateStore) Start(ctx context.Context, timeout time.Duration) error {
	s.factory.Start(ctx.Done())
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), s.informer.HasSynced) {
		return fmt.Errorf("shared-state ConfigMaps in namespace %s: informer cache did not sync within %s", s.namespace, timeout)
	}
	return nil
}

// Data returns the cached data of ConfigMap name (nil: none yet).
func (s *StateStore) Data(name string) map[string]string {
	o, ok, _ := s.informer.GetStore().GetByKey(s.namespace + "/" + name)
	if !ok {
		return nil
	}
	cm, _ := o.(*corev1.ConfigMap)
	if cm == nil {
		return nil
	}
	return cm.Data
}

// Put adds set to ConfigMap name (creating it) and deletes the keys in del
// in the same patch (keys whose values are never rewritten, so deleting
// them unconditionally loses nothing); then it deletes the keys
// expired(data) names in what the write returned, on the condition that
// nobody wrote in between. It returns the data after the write.
func (s *StateStore) Put(ctx context.Context, name string, set map[string]string, del []string, expired func(data map[string]string) []string) (map[string]string, error) {
	cm, err := s.merge(ctx, name, set, del)
	if err != nil {
		return nil, err
	}
	if expired == nil {
		return cm.Data, nil
	}
	drop := expired(cm.Data)
	if len(drop) == 0 {
		return cm.Data, nil
	}
	nulls := make(map[string]*string, len(drop))
	for _, k := range drop {
		nulls[k] = nil
	}
	pruned, err := s.patch(ctx, name, nulls, cm.ResourceVersion)
	switch {
	case apierrors.IsConflict(err):
		return cm.Data, nil // someone wrote meanwhile: prune next time
	case err != nil:
		return cm.Data, fmt.Errorf("prune ConfigMap %s/%s: %w", s.namespace, name, err)
	}
	return pruned.Data, nil
}

// merge merge-patches set into the ConfigMap, creating it when missing.
func (s *StateStore) merge(ctx context.Context, name string, set map[string]string, del []string) (*corev1.ConfigMap, error) {
	vals := make(map[string]*string, len(set)+len(del))
	for _, k := range del {
		vals[k] = nil
	}
	for k, v := range set {
		vals[k] = &v
	}
	for try := 0; ; try++ {
		cm, err := s.patch(ctx, name, vals, "")
		if !apierrors.IsNotFound(err) || try > 0 {
			if err != nil {
				return nil, fmt.Errorf("patch ConfigMap %s/%s: %w", s.namespace, name, err)
			}
			return cm, nil
		}
		cm, err = s.kube.CoreV1().ConfigMaps(s.namespace).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace, Labels: map[string]string{
				sharedstate.Label: "true", "app.kubernetes.io/managed-by": "joinery"}},
			Data: set,
		}, metav1.CreateOptions{})
		if err == nil {
			return cm, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create ConfigMap %s/%s: %w", s.namespace, name, err)
		}
		// Another replica created it first: patch it.
	}
}

func (s *StateStore) patch(ctx context.Context, name string, vals map[string]*string, rv string) (*corev1.ConfigMap, error) {
	body := map[string]interface{}{"data": vals}
	if rv != "" {
		body["metadata"] = map[string]string{"resourceVersion": rv}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return s.kube.CoreV1().ConfigMaps(s.namespace).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
}
