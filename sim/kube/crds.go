package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/joinery/joinery/deploy"
)

// crdEstablishTimeout bounds the wait for the CRDs when ctx has no deadline.
const crdEstablishTimeout = 60 * time.Second

// InstallCRDs creates or updates the CustomResourceDefinitions embedded in
// package deploy (karpenter.sh/v1 NodePool and NodeClaim, karpenter.k8s.aws/v1
// EC2NodeClass) and waits until each is Established, so that objects of those
// kinds can be created right after it returns.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	cs, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds, err := parseCRDs(deploy.CRDs())
	if err != nil {
		return err
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, want := range crds {
		_, err := api.Create(ctx, want, metav1.CreateOptions{FieldManager: "joinery"})
		if apierrors.IsAlreadyExists(err) {
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				have.Labels, have.Annotations, have.Spec = want.Labels, want.Annotations, want.Spec
				_, err = api.Update(ctx, have, metav1.UpdateOptions{FieldManager: "joinery"})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", want.Name, err)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, crdEstablishTimeout)
		defer cancel()
	}
	for _, want := range crds {
		if err := waitEstablished(ctx, cs, want.Name); err != nil {
			return err
		}
	}
	return nil
}

// parseCRDs decodes YAML CustomResourceDefinitions, rejecting unknown fields.
func parseCRDs(docs [][]byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for i, doc := range docs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("CRD document %d: %w", i, err)
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
			return nil, fmt.Errorf("CRD document %d: not a named CustomResourceDefinition (kind %q)", i, crd.Kind)
		}
		out = append(out, crd)
	}
	return out, nil
}

// waitEstablished polls the CRD until its Established condition is True.
func waitEstablished(ctx context.Context, cs apiextensions.Interface, name string) error {
	var last string
	for {
		crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			var conds []string
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
				conds = append(conds, fmt.Sprintf("%s=%s (%s)", cond.Type, cond.Status, cond.Message))
			}
			last = strings.Join(conds, ", ")
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established: %w (last seen: %s)", name, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
