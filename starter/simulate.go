package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"github.com/spf13/cobra"
)

// DefaultAdminAddr is where `starter dev` serves the local world's admin endpoint.
const DefaultAdminAddr = "127.0.0.1:8234"

func newSimulateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Make things happen in the running local world (starter dev)",
	}
	cmd.AddCommand(newSimulateInterruptionCommand(), newSimulateNodeFaultCommand())
	return cmd
}

func newSimulateInterruptionCommand() *cobra.Command {
	var (
		node, instance, kind, admin, output string
		notice                              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "interruption --node <name>",
		Short: "Send an EC2 interruption event for a node to the local interruption queue and reclaim its instance after the notice",
		Long: `interruption asks the running ` + "`starter dev`" + ` (its loopback admin endpoint, --admin-addr) to put
the EventBridge event of --kind for the node's instance on the local SQS interruption queue,
exactly as AWS would deliver it, and to make the EC2 endpoint reclaim the instance once the
notice has passed (shutting-down, then terminated; the reclaim also sends the "EC2 Instance
State-change Notification"). Joinery's poller picks the message up and starts the workflow
interruption/<instance-id>/<kind>; watch it in the Web UI.

Kinds:
  spot        EC2 Spot Instance Interruption Warning; reclaim after --notice (2m, as on EC2)
  health      AWS Health scheduled change (EC2, scheduledChange) starting after --notice
  stopped     EC2 Instance State-change Notification, state stopping; reclaim after --notice
  terminated  no warning: the instance is reclaimed now (state change shutting-down)
  rebalance   EC2 Instance Rebalance Recommendation; no reclaim
  reservation EC2 Capacity Reservation Instance Interruption Warning (the instance must run in an
              interruptible reservation, which shrinks by one); reclaim after --notice`,
		Example: "  go run ./starter simulate interruption --node ip-10-0-64-4.ec2.internal --kind spot --notice 2m",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if node == "" && instance == "" {
				return fmt.Errorf("--node or --instance is required")
			}
			req := map[string]string{"node": node, "instanceId": instance, "kind": kind, "notice": notice.String()}
			var res world.SimulateResult
			if err := postAdmin(cmd.Context(), admin, "/simulate/interruption", req, &res); err != nil {
				return err
			}
			if output == "json" {
				return json.NewEncoder(os.Stdout).Encode(res)
			}
			fmt.Printf("sent %s event %s for instance %s", res.Kind, res.EventID, res.InstanceID)
			if res.Node != "" {
				fmt.Printf(" (node %s)", res.Node)
			}
			fmt.Println()
			if !res.ReclaimAt.IsZero() {
				fmt.Printf("EC2 reclaims it at %s (in %s)\n", res.ReclaimAt.Format(time.RFC3339), time.Until(res.ReclaimAt).Round(time.Second))
			}
			if msg, err := interruption.Parse([]byte(res.Body)); err == nil && res.Kind != world.SimTerminated {
				fmt.Printf("workflow: %s\n", workflows.InterruptionWorkflowID(res.InstanceID, msg.Kind))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&node, "node", "", "the Node to interrupt")
	fl.StringVar(&instance, "instance", "", "or the instance id")
	fl.StringVar(&kind, "kind", world.SimSpot, "spot, health, stopped, terminated, rebalance or reservation")
	fl.DurationVar(&notice, "notice", world.DefaultNotice, "time until EC2 reclaims the instance")
	fl.StringVar(&admin, "admin-addr", DefaultAdminAddr, "the admin endpoint of the running `starter dev`")
	fl.StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
