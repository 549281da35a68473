package kube

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// The writes the activities make to Nodes and Pods. Errors are the API
// server's, so callers tell NotFound, Conflict and TooManyRequests apart.

// GetNode reads a Node from the API server (not the cache): what a write
// is about to build on.
func (c *Cluster) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// UpdateNode reads the Node, lets mutate change it and writes it back,
// retried on conflict so what the kubelet wrote meanwhile is kept. mutate
// returns false when there is nothing to write.
func (c *Cluster) UpdateNode(ctx context.Context, name string, mutate func(*corev1.Node) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.GetNode(ctx, name)
		if err != nil {
			return err
		}
		if !mutate(n) {
			return nil
		}
		_, err = c.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// LabelNode sets labels on a Node (a strategic merge patch).
func (c *Cluster) LabelNode(ctx context.Context, name string, labels map[string]string) error {
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"labels": labels}})
	if err != nil {
		return err
	}
	_, err = c.Kube.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// RequestNodeDeletion asks the API server to delete a Node and leaves its
// finalizers alone; uid, when set, is a precondition (the Node must be that
// one, not a new one of the same name).
func (c *Cluster) RequestNodeDeletion(ctx context.Context, name string, uid types.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	return c.Kube.CoreV1().Nodes().Delete(ctx, name, opts)
}

// EvictPod evicts a pod through the Eviction API (policy/v1), so its
// PodDisruptionBudgets are enforced by the API server (429: not now).
func (c *Cluster) EvictPod(ctx context.Context, p *corev1.Pod) error {
	return c.Kube.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
	})
}

// DeletePod deletes a pod with the grace period (nil: its own); uid, when
// set, is a precondition.
func (c *Cluster) DeletePod(ctx context.Context, p *corev1.Pod, grace *int64, uid types.UID) error {
	opts := metav1.DeleteOptions{GracePeriodSeconds: grace}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	return c.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, opts)
}

// NominatePod sets a pending pod's status.nominatedNodeName: the
// kube-scheduler tries that node first and keeps the pod's requests free
// there from pods of equal or lower priority (KEP-5278). The UID in the
// patch makes it fail on a pod recreated under the same name.
func (c *Cluster) NominatePod(ctx context.Context, p *corev1.Pod, node string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": p.UID},
		"status":   map[string]any{"nominatedNodeName": node},
	})
	if err != nil {
		return err
	}
	_, err = c.Kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// PatchNodeLabels sets (a value) or removes (nil) a Node's labels with a
// merge patch; a Node gone is no error.
func (c *Cluster) PatchNodeLabels(ctx context.Context, name string, labels map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	_, err = c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
