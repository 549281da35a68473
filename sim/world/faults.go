package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/joinery/joinery/sim/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Node faults (starter simulate node-fault --kind).
const (
	// FaultCondition: a node monitoring agent condition goes False, as the
	// EKS node monitoring agent sets it on a fatal finding (or Ready False,
	// as a kubelet whose runtime or network is not ready reports it).
	FaultCondition = "condition"
	// FaultKubeletStopped: the kubelet stops posting status; after the node
	// monitor grace period the node lifecycle controller's part is played:
	// its conditions go Unknown and it is tainted unreachable.
	FaultKubeletStopped = "kubelet-stopped"
	// FaultImpaired: EC2's instance status check fails (DescribeInstanceStatus:
	// impaired, reachability failed since now). The kubelet is left as it
	// is: add kubelet-stopped for an instance nothing reaches.
	FaultImpaired = "impaired"
)

// DefaultNodeMonitorGracePeriod is kube-controller-manager's
// --node-monitor-grace-period default: how long a node may go without a
// status before its conditions are set Unknown.
const DefaultNodeMonitorGracePeriod = 50 * time.Second

// nmaReasons are the reasons the EKS node monitoring agent gives a
// condition it sets False (one fatal finding each), and the kubelet's for
// Ready. StorageReady has none: the agent only records storage Events,
// so that fault needs a reason of the caller's.
var nmaReasons = map[string][2]string{
	"AcceleratedHardwareReady": {"NvidiaXID79Error", "XID 79: the GPU has fallen off the bus"},
	"NetworkingReady":          {"IPAMDNotReady", "the VPC CNI's IPAM daemon is not ready"},
	"KernelReady":              {"ForkFailedOutOfPIDs", "fork failed: the node ran out of PIDs"},
	"ContainerRuntimeReady":    {"PodStuckTerminating", "a pod has been terminating for longer than its grace period"},
	"Ready":                    {"KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady"},
}

// NodeFaultRequest breaks one node.
type NodeFaultRequest struct {
	Node string `json:"node"`
	Kind string `json:"kind,omitempty"` // condition (default), kubelet-stopped or impaired
	// Condition is the condition FaultCondition sets False
	// (AcceleratedHardwareReady, StorageReady, NetworkingReady,
	// KernelReady, ContainerRuntimeReady or Ready); Reason and Message
	// default to the agent's for it.
	Condition string `json:"condition,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// Grace is the node monitor grace period of FaultKubeletStopped
	// (default DefaultNodeMonitorGracePeriod; tests shorten it).
	Grace time.Duration `json:"grace,omitempty"`
}

// NodeFaultResult says what was done.
type NodeFaultResult struct {
	Node       string    `json:"node"`
	InstanceID string    `json:"instanceId"`
	Kind       string    `json:"kind"`
	Condition  string    `json:"condition,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	At         time.Time `json:"at"`
	// UnknownAt is when the conditions go Unknown (kubelet-stopped).
	UnknownAt time.Time `json:"unknownAt,omitempty"`
}

// SimulateNodeFault breaks req.Node as req.Kind says.
func (w *World) SimulateNodeFault(ctx context.Context, req NodeFaultRequest) (NodeFaultResult, error) {
	if req.Kind == "" {
		req.Kind = FaultCondition
	}
	res := NodeFaultResult{Node: req.Node, Kind: req.Kind, At: time.Now().UTC()}
	if req.Node == "" {
		return res, errors.New("name a node")
	}
	kc, n, err := w.nodeNamed(ctx, req.Node)
	if err != nil {
		return res, err
	}
	res.InstanceID = instanceOf(n)
	switch req.Kind {
	case FaultCondition:
		return w.failCondition(ctx, kc, n, req, res)
	case FaultKubeletStopped:
		return stopKubelet(ctx, kc, n, req, res)
	case FaultImpaired:
		return res, w.EC2.Impair(res.InstanceID, res.At)
	}
	return res, fmt.Errorf("unknown node fault %q (condition, kubelet-stopped, impaired)", req.Kind)
}

// nodeNamed reads a Node, with the client the world's faults write with.
func (w *World) nodeNamed(ctx context.Context, name string) (kubernetes.Interface, *corev1.Node, error) {
	kc, err := kubernetes.NewForConfig(w.Kube.RESTConfig())
	if err != nil {
		return nil, nil, err
	}
	n, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	return kc, n, err
}

// instanceOf is the instance id at the end of a Node's providerID
// (aws:///<zone>/<instance-id>).
func instanceOf(n *corev1.Node) string {
	return n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]
}

// failCondition sets the condition False with the agent's reason. Ready
// False is a kubelet's report: kwok, which would report Ready again, stops
// managing the node, and the not-ready taint the node lifecycle
// controller adds for it is added.
func (w *World) failCondition(ctx context.Context, kc kubernetes.Interface, n *corev1.Node, req NodeFaultRequest, res NodeFaultResult) (NodeFaultResult, error) {
	def, known := nmaReasons[req.Condition]
	if !known && req.Condition != "StorageReady" {
		return res, fmt.Errorf("condition %q: one of AcceleratedHardwareReady, StorageReady, NetworkingReady, KernelReady, ContainerRuntimeReady, Ready", req.Condition)
	}
	if req.Reason == "" {
		if !known {
			return res, errors.New("StorageReady: the node monitoring agent sets no reason for it; pass one")
		}
		req.Reason = def[0]
	}
	if req.Message == "" {
		req.Message = def[1]
	}
	res.Condition, res.Reason = req.Condition, req.Reason
	if req.Condition == "Ready" {
		if err := unmanage(ctx, kc, n.Name, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}); err != nil {
			return res, err
		}
	}
	cond := corev1.NodeCondition{Type: corev1.NodeConditionType(req.Condition), Status: corev1.ConditionFalse, Reason: req.Reason, Message: req.Message,
		LastTransitionTime: metav1.NewTime(res.At), LastHeartbeatTime: metav1.NewTime(res.At)}
	return res, patchConditions(ctx, kc, n.Name, cond)
}

// stopKubelet takes the node from kwok (no more heartbeats, no pod is
// run or ended there any more) and, after the grace period, does what the
// node lifecycle controller does to a node whose status stopped: every
// kubelet condition Unknown, the unreachable taints, its pods not Ready.
func stopKubelet(ctx context.Context, kc kubernetes.Interface, n *corev1.Node, req NodeFaultRequest, res NodeFaultResult) (NodeFaultResult, error) {
	if req.Grace <= 0 {
		req.Grace = DefaultNodeMonitorGracePeriod
	}
	if err := unmanage(ctx, kc, n.Name); err != nil {
		return res, err
	}
	res.UnknownAt = res.At.Add(req.Grace)
	go monitorSilentNode(kc, n.Name, req.Grace)
	return res, nil
}

// nodeMonitorPeriod is kube-controller-manager's --node-monitor-period:
// how often the node lifecycle controller checks each node.
const nodeMonitorPeriod = 5 * time.Second

// monitorSilentNode plays the node lifecycle controller for a node whose
// kubelet stopped: after the grace period, and at every monitor period
// after that until the node is gone, a Ready that is not Unknown (a status
// kwok wrote just before it let the node go) is set Unknown again.
func monitorSilentNode(kc kubernetes.Interface, name string, grace time.Duration) {
	time.Sleep(grace)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		n, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && readyStatus(n) != corev1.ConditionUnknown {
			err = markUnknown(ctx, kc, name)
		}
		cancel()
		if err != nil { // the node is gone, or the world stopped
			return
		}
		time.Sleep(nodeMonitorPeriod)
	}
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// markUnknown is the node lifecycle controller's answer to a silent node.
func markUnknown(ctx context.Context, kc kubernetes.Interface, name string) error {
	now := metav1.Now()
	var conds []corev1.NodeCondition
	for _, t := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		conds = append(conds, corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
			Message: "Kubelet stopped posting node status.", LastTransitionTime: now, LastHeartbeatTime: now})
	}
	if err := patchConditions(ctx, kc, name, conds...); err != nil {
		return err
	}
	if err := taint(ctx, kc, name, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now}); err != nil {
		return err
	}
	pods, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return err
	}
	notReady, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}}})
	for _, p := range pods.Items {
		_, _ = kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, notReady, metav1.PatchOptions{}, "status")
	}
	return nil
}

// unmanage removes kwok's annotation (kwok no longer plays the node's
// kubelet) and adds taints.
func unmanage(ctx context.Context, kc kubernetes.Interface, name string, taints ...corev1.Taint) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{kube.KwokNodeAnnotation: nil}}})
	if _, err := kc.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	return taint(ctx, kc, name, taints...)
}

// taint adds the taints the node lacks.
func taint(ctx context.Context, kc kubernetes.Interface, name string, taints ...corev1.Taint) error {
	if len(taints) == 0 {
		return nil
	}
	n, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, t := range taints {
		if !slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect }) {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
	_, err = kc.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

// patchConditions sets node conditions (merged by type, as a kubelet or
// the agent patches them).
func patchConditions(ctx context.Context, kc kubernetes.Interface, name string, conds ...corev1.NodeCondition) error {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	_, err := kc.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
