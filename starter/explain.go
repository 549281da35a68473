package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/joinery/joinery/api/provreq"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/solver"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Explanation is what `starter explain` reports about one pod.
type Explanation struct {
	Pod       string   `json:"pod"`
	Phase     string   `json:"phase"`
	Node      string   `json:"node,omitempty"`
	NodePool  string   `json:"nodePool,omitempty"`
	Scheduler string   `json:"scheduler,omitempty"` // the kube-scheduler's PodScheduled message
	Events    []string `json:"events,omitempty"`    // Joinery's Events on the pod, oldest first
	// Gang: the ProvisioningRequest the pod consumes and its Provisioned
	// condition (such pods get capacity only from its all-or-nothing tries).
	Gang string `json:"gang,omitempty"`
	// WouldGo is where a fresh plan for this pod alone puts it: a NodePool
	// and its cheapest instance type and offering, or why nowhere.
	WouldGo string `json:"wouldGo"`
}

func newExplainCommand() *cobra.Command {
	var (
		kubeconfig, namespace, output string
		tf                            temporalFlags
	)
	cmd := &cobra.Command{
		Use:   "explain [pod] <pod> | explain node <node>",
		Short: "Say why a pod is pending or where Joinery would put it; why a node is or is not disrupted",
		Long: `explain <pod> (or explain pod <pod>) reads a pod, the kube-scheduler's verdict and
Joinery's Events on it (FailedScheduling with the reason, Nominated with the NodeClaim), and
plans the pod alone against the cluster's NodePools and the instance catalog to say which
NodePool and instance type would take it, or which constraint no instance type meets.

explain node <node> (a Node or NodeClaim name) prints its NodeClaim, NodePool, instance type
and price, whether voluntary disruption may take it, every reason the last consolidation
pass gave for not disrupting it (the Consolidation workflow's status query: do-not-disrupt
pods, PDBs, budgets, no cheaper replacement, pods that would not fit...), the recent
decisions naming it, and Joinery's Events on the Node and NodeClaim (DisruptionBlocked,
Unconsolidatable, Disruption*).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if len(args) == 2 {
				switch args[0] {
				case "node":
					return runExplainNode(cmd.Context(), kubeconfig, tf, args[1], output)
				case "pod":
					name = args[1]
				default:
					return fmt.Errorf("explain %s %s: the first word must be pod or node", args[0], args[1])
				}
			}
			ex, err := explain(cmd.Context(), kubeconfig, namespace, name)
			if err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(os.Stdout).Encode(ex)
			}
			fmt.Printf("pod %s: %s", ex.Pod, ex.Phase)
			if ex.Node != "" {
				fmt.Printf(" on %s (NodePool %s)", ex.Node, ex.NodePool)
			}
			fmt.Println()
			if ex.Scheduler != "" {
				fmt.Printf("kube-scheduler: %s\n", ex.Scheduler)
			}
			for _, e := range ex.Events {
				fmt.Printf("joinery: %s\n", e)
			}
			if ex.Gang != "" {
				fmt.Printf("gang: %s\n", ex.Gang)
			}
			fmt.Printf("would go: %s\n", ex.WouldGo)
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", defaultKubeconfig(), "kubeconfig (default $KUBECONFIG, else the local world's)")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "the pod's namespace")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	tf.add(cmd) // explain node asks the Consolidation workflow
	return cmd
}

func defaultKubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return k
	}
	return ".joinery/kube/admin.kubeconfig"
}

// kubeClients are the typed and dynamic clients of a kubeconfig.
func kubeClients(kubeconfig string) (*kubernetes.Clientset, *dynamic.DynamicClient, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	kc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	return kc, dc, nil
}

func explain(ctx context.Context, kubeconfig, ns, name string) (*Explanation, error) {
	kc, dc, err := kubeClients(kubeconfig)
	if err != nil {
		return nil, err
	}
	pod, err := kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ex := &Explanation{Pod: ns + "/" + name, Phase: string(pod.Status.Phase), Node: pod.Spec.NodeName}
	if pod.Spec.NodeName != "" {
		if n, err := kc.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{}); err == nil {
			ex.NodePool = n.Labels[apiv1.LabelNodePool]
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			ex.Scheduler = c.Reason + ": " + c.Message
		}
	}
	evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err == nil {
		sort.Slice(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
		for _, e := range evs.Items {
			if e.Source.Component == "joinery" {
				ex.Events = append(ex.Events, e.Reason+": "+e.Message)
			}
		}
	}
	if req := provreq.ConsumedRequest(pod.Annotations); req != "" {
		ex.Gang = gangState(ctx, dc, ns, req)
	}
	ex.WouldGo, err = wouldGo(ctx, kc, dc, pod)
	return ex, err
}

// gangState describes the ProvisioningRequest a pod consumes.
func gangState(ctx context.Context, dc dynamic.Interface, ns, name string) string {
	u, err := dc.Resource(provreq.ProvisioningRequestGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("consumes ProvisioningRequest %s/%s, which cannot be read: %v", ns, name, err)
	}
	pr := &provreq.ProvisioningRequest{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pr); err != nil {
		return fmt.Sprintf("consumes ProvisioningRequest %s/%s, which does not decode: %v", ns, name, err)
	}
	out := fmt.Sprintf("consumes ProvisioningRequest %s/%s (provisioned only all or nothing, by gang/%s/%s/<try>)", ns, name, ns, name)
	for _, t := range []string{provreq.Accepted, provreq.Provisioned, provreq.BookingExpired, provreq.Failed} {
		if c := pr.Condition(t); c != nil {
			out += fmt.Sprintf("; %s=%s %s: %s", t, c.Status, c.Reason, c.Message)
		}
	}
	return out
}

// wouldGo plans the pod alone on new capacity from the cluster's valid
// NodePools, with its volumes read from the cluster.
func wouldGo(ctx context.Context, kc kubernetes.Interface, dc dynamic.Interface, pod *corev1.Pod) (string, error) {
	cat, err := catalog.Default()
	if err != nil {
		return "", err
	}
	list, err := dc.Resource(apiv1.NodePoolGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list NodePools: %w", err)
	}
	var in solver.Input
	for _, u := range list.Items {
		np := &apiv1.NodePool{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np) != nil || len(np.Validate()) > 0 || np.IsStatic() {
			continue
		}
		var nc *apiv1.EC2NodeClass
		if cu, err := dc.Resource(apiv1.EC2NodeClassGVR).Get(ctx, np.Spec.Template.Spec.NodeClassRef.Name, metav1.GetOptions{}); err == nil {
			nc = &apiv1.EC2NodeClass{}
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(cu.Object, nc)
		}
		in.NodePools = append(in.NodePools, solver.NodePoolFromAPI(np, nc, cat, catalog.DefaultZones, nil))
	}
	p := pod.DeepCopy()
	p.Spec.NodeName = ""
	in.Pods = []solver.Pod{solver.PodWithVolumes(p, solver.VolumeObjects{
		PVC: func(ns, name string) *corev1.PersistentVolumeClaim {
			o, _ := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			return o
		},
		PV: func(name string) *corev1.PersistentVolume {
			o, _ := kc.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			return o
		},
		StorageClass: func(name string) *storagev1.StorageClass {
			o, _ := kc.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
			return o
		},
	}, nil)}
	plan := solver.Solve(in)
	if len(plan.Unschedulable) > 0 {
		return "nowhere: " + plan.Unschedulable[0].Reason, nil
	}
	if len(plan.NewNodeClaims) == 0 {
		return "no NodePool", nil
	}
	nn := plan.NewNodeClaims[0]
	best := solver.CheapestOffering(nn.InstanceTypes[0].Offerings)
	return fmt.Sprintf("NodePool %s on %s (%s, %s) at %.4f USD/hour, %d instance types fit",
		nn.NodePool, nn.InstanceTypes[0].Type.Name, best.CapacityType, best.Zone, best.Price, len(nn.InstanceTypes)), nil
}
