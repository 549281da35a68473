package kubelet

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// The kubelet's Ready condition while the CNI plugin is not installed yet
// (the container runtime reports NetworkReady=false until aws-node has
// written the CNI binary and configuration).
const (
	ReasonKubeletNotReady = "KubeletNotReady"
	MessageCNINotReady    = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
)

// registeredConditions are the conditions a kubelet posts when it
// registers before the network is up: no pressure, not Ready.
func registeredConditions(now time.Time) []corev1.NodeCondition {
	t := metav1.NewTime(now)
	cond := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
	}
	return []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		cond(corev1.NodeReady, corev1.ConditionFalse, ReasonKubeletNotReady, MessageCNINotReady),
	}
}

// readyPoll is how often networkReady looks for the Ready condition.
const readyPoll = 200 * time.Millisecond

// networkReady is the CNI coming up: the kubelet then reports Ready (kwok,
// which from now on manages the Node, posts it and keeps heartbeating),
// and once the Node is Ready the node-lifecycle controller's part in a
// real cluster removes node.kubernetes.io/not-ready:NoSchedule (the local
// kube-controller-manager does not run that controller, and the
// TaintNodesByCondition admission plugin that put the taint there at
// creation is off, so the sim kubelet does both). gone: the Node was
// deleted or belongs to another instance.
func (r *Registrar) networkReady(ctx context.Context, inst Instance, name string) (gone bool, err error) {
	nodes := r.Kube.CoreV1().Nodes()
	providerID := "aws:///" + inst.Zone + "/" + inst.ID
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || err == nil && n.Spec.ProviderID != providerID {
			gone = true
			return nil
		} else if err != nil {
			return err
		}
		if n.Annotations[KwokAnnotation] == kwokValue {
			return nil
		}
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[KwokAnnotation] = kwokValue
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil || gone {
		return gone, err
	}
	err = wait.PollUntilContextTimeout(ctx, readyPoll, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone = true
			return true, nil
		}
		return err == nil && nodeReady(n), nil
	})
	if err != nil || gone {
		return gone, err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone = true
			return nil
		} else if err != nil || !dropTaint(n, corev1.TaintNodeNotReady) {
			return err
		}
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err == nil && !gone {
		r.Log.Info("node ready", zap.String("node", name), zap.String("instance", inst.ID))
	}
	return gone, err
}

// kwokValue is the annotation value kwok's selector matches.
const kwokValue = "fake"

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
