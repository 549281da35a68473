package kube

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// ReadManifests parses multi-document YAML files into objects, in order.
// Empty documents are skipped; a document without kind or apiVersion is an
// error naming the file and document number, and so is an object of an
// older Karpenter API version (karpenter.sh/v1beta1 ...), with the command
// that converts it (apiv1.OlderVersion).
func ReadManifests(paths ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		objs, err := parseManifests(p, data)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ParseManifests is ReadManifests for YAML held in memory.
func ParseManifests(data []byte) ([]*unstructured.Unstructured, error) {
	return parseManifests("", data)
}

func parseManifests(file string, data []byte) ([]*unstructured.Unstructured, error) {
	name := file
	if name == "" {
		name = "manifest"
	}
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", name, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := map[string]interface{}{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", name, i, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s document %d: missing kind or apiVersion", name, i)
		}
		if advice, old := apiv1.OlderVersion(u.GetAPIVersion(), u.GetKind(), file); old {
			return nil, fmt.Errorf("%s document %d: %s %s %s: %s", name, i, u.GetAPIVersion(), u.GetKind(), u.GetName(), advice)
		}
		out = append(out, u)
	}
	return out, nil
}

// Apply server-side-applies objects (field manager "joinery"), resolving
// kinds through API discovery; namespaced objects without a namespace go to
// "default". It stops at the first error, naming the object.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		force := true
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "joinery", Force: &force}); err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
	}
	return nil
}
