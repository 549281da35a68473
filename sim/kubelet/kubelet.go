// Package kubelet stands in for the kubelet's registration in the local
// world: when the local EC2 endpoint reports an instance running, it
// creates the Node the way an EKS node's kubelet would (labels and taints
// from the NodeClaim as user data would pass them, capacity and allocatable
// per EKS formulas, providerID aws:///<zone>/<id>). kwok then keeps the Node
// Ready and runs its pods.
package kubelet

import (
	"context"
	"fmt"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/ec2"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// KwokAnnotation marks Nodes kwok manages (--manage-nodes-with-annotation-selector).
const KwokAnnotation = "kwok.x-k8s.io/node"

// Registrar registers Nodes for running instances.
type Registrar struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Catalog *catalog.Catalog
	Region  string
	Log     *zap.Logger
}

// Register creates the Node for a running instance, retrying API errors for
// up to a minute. An instance without a NodeClaim tag registers with its
// instance labels only.
func (r *Registrar) Register(ctx context.Context, inst ec2.Instance) error {
	var err error
	for i := 0; i < 60; i++ {
		if err = r.register(ctx, inst); err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	r.Log.Error("node registration failed", zap.String("instance", inst.ID), zap.Error(err))
	return err
}

func (r *Registrar) register(ctx context.Context, inst ec2.Instance) error {
	it, ok := r.Catalog.Get(inst.InstanceType)
	if !ok {
		return fmt.Errorf("instance type %s not in catalog", inst.InstanceType)
	}
	labels := it.Labels()
	labels[apiv1.LabelZone] = inst.Zone
	labels[apiv1.LabelRegion] = r.Region
	labels[apiv1.LabelCapacityType] = inst.CapacityType
	labels[apiv1.LabelHostname] = inst.PrivateDNSName
	taints := []corev1.Taint{{Key: apiv1.TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}}
	var kubelet *apiv1.KubeletConfiguration
	root := int64(20 << 30)
	if name := inst.Tags[apiv1.TagNodeClaim]; name != "" {
		u, err := r.Dynamic.Resource(apiv1.NodeClaimGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("nodeclaim %s: %w", name, err)
		}
		nc := &apiv1.NodeClaim{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, nc); err != nil {
			return err
		}
		for k, v := range nc.Labels {
			labels[k] = v
		}
		taints = append(taints, nc.Spec.Taints...)
		taints = append(taints, nc.Spec.StartupTaints...)
		if nc.Spec.NodeClassRef != nil {
			if u, err := r.Dynamic.Resource(apiv1.EC2NodeClassGVR).Get(ctx, nc.Spec.NodeClassRef.Name, metav1.GetOptions{}); err == nil {
				cls := &apiv1.EC2NodeClass{}
				if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cls) == nil {
					kubelet, root = cls.Spec.Kubelet, cls.Spec.RootVolumeSize()
				}
			}
		}
	}
	shape := it.Shape(kubelet, root)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        inst.PrivateDNSName,
			Labels:      labels,
			Annotations: map[string]string{KwokAnnotation: "fake"},
		},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + inst.Zone + "/" + inst.ID, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    shape.Capacity.ToResourceList(),
			Allocatable: shape.Allocatable.ToResourceList(),
			NodeInfo:    corev1.NodeSystemInfo{Architecture: it.Arch, OperatingSystem: "linux", KubeletVersion: "v1.37.2-joinery-sim"},
		},
	}
	created, err := r.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// Some API server versions drop status on create: make sure it is set.
	if len(created.Status.Allocatable) == 0 {
		created.Status = node.Status
		if _, err := r.Kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", node.Name, err)
		}
	}
	r.Log.Info("node registered", zap.String("node", node.Name), zap.String("instance", inst.ID), zap.String("instanceType", inst.InstanceType))
	return nil
}
