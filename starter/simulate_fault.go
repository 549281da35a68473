package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"github.com/spf13/cobra"
)

func newSimulateNodeFaultCommand() *cobra.Command {
	var (
		node, kind, condition, reason, message, admin, output string
		grace                                                 time.Duration
	)
	cmd := &cobra.Command{
		Use:   "node-fault --node <name>",
		Short: "Break a node of the local world: a failed health condition, or a kubelet that stops posting status",
		Long: `node-fault asks the running ` + "`starter dev`" + ` (its loopback admin endpoint, --admin-addr) to break
a node as a real one breaks. With --feature-gates NodeRepair=true, Joinery repairs it once the
condition's toleration has passed (workflow repair/<node>).

Kinds:
  condition        --condition goes False as the EKS node monitoring agent sets it on a fatal
                   finding, with the agent's reason (AcceleratedHardwareReady: NvidiaXID79Error,
                   NetworkingReady: IPAMDNotReady, KernelReady: ForkFailedOutOfPIDs,
                   ContainerRuntimeReady: PodStuckTerminating; StorageReady needs --reason), or
                   Ready False as a kubelet reports it (KubeletNotReady; kwok stops managing the
                   node and it is tainted not-ready)
  kubelet-stopped  the kubelet stops posting status (kwok stops managing the node); after
                   --grace the node lifecycle controller's part is played: Ready and the
                   pressure conditions Unknown (NodeStatusUnknown), the unreachable taints,
                   its pods not Ready
  impaired         EC2's instance status check fails (DescribeInstanceStatus: impaired,
                   reachability failed); the kubelet is left as it is`,
		Example: "  go run ./starter simulate node-fault --node ip-10-0-64-4.ec2.internal --condition AcceleratedHardwareReady\n" +
			"  go run ./starter simulate node-fault --node ip-10-0-64-4.ec2.internal --kind kubelet-stopped",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if node == "" {
				return fmt.Errorf("--node is required")
			}
			req := map[string]string{"node": node, "kind": kind, "condition": condition, "reason": reason, "message": message, "grace": grace.String()}
			var res world.NodeFaultResult
			if err := postAdmin(cmd.Context(), admin, "/simulate/node-fault", req, &res); err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(os.Stdout).Encode(res)
			}
			switch res.Kind {
			case world.FaultImpaired:
				fmt.Printf("instance %s of %s: status check impaired\n", res.InstanceID, res.Node)
			case world.FaultKubeletStopped:
				fmt.Printf("kubelet of %s (%s) stopped; Ready=Unknown at %s\n", res.Node, res.InstanceID, res.UnknownAt.Format(time.RFC3339))
			default:
				fmt.Printf("%s=False (%s) on %s (%s)\n", res.Condition, res.Reason, res.Node, res.InstanceID)
			}
			fmt.Printf("workflow (with NodeRepair=true, after the toleration): %s\n", workflows.RepairWorkflowID(res.Node))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&node, "node", "", "the Node to break")
	fl.StringVar(&kind, "kind", world.FaultCondition, "condition, kubelet-stopped or impaired")
	fl.StringVar(&condition, "condition", "AcceleratedHardwareReady", "the condition --kind condition sets False")
	fl.StringVar(&reason, "reason", "", "the condition's reason (default: the agent's for it)")
	fl.StringVar(&message, "message", "", "the condition's message (default: the agent's for it)")
	fl.DurationVar(&grace, "grace", world.DefaultNodeMonitorGracePeriod, "kubelet-stopped: the node monitor grace period before Ready=Unknown")
	fl.StringVar(&admin, "admin-addr", DefaultAdminAddr, "the admin endpoint of the running `starter dev`")
	fl.StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
