package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/joinery/joinery/api/saga"
	"github.com/joinery/joinery/internal/logging"
	"github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/providers/temporal/codec"
	"github.com/joinery/joinery/workflows"
	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

type temporalFlags struct {
	address   string
	namespace string
	// sec: mTLS, API key and payload encryption (flags, defaults from the
	// environment as for the worker).
	sec temporal.Config
	// keyring is set by dial when payload encryption is on.
	keyring *codec.Keyring
}

func (t *temporalFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.address, "temporal-address", temporal.DefaultHostPort, "Temporal frontend host:port")
	cmd.Flags().StringVar(&t.namespace, "temporal-namespace", temporal.DefaultNamespace, "Temporal namespace")
	t.sec = temporal.FromEnv(os.Getenv)
	t.sec.BindFlags(cmd.Flags())
}

func (t *temporalFlags) dial() (client.Client, error) {
	cfg := t.sec
	cfg.HostPort, cfg.Namespace = t.address, t.namespace
	conn, err := temporal.Load(cfg)
	if err != nil {
		return nil, err
	}
	opts := conn.Options
	opts.Logger = logging.NopTemporal() // keeps the SDK's chatter off the terminal
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("temporal at %s (%s): %w (is `starter dev` or the worker's Temporal running?)", t.address, conn.Describe(), err)
	}
	t.keyring = conn.Keyring
	return c, nil
}

func newDrainCommand() *cobra.Command {
	var (
		tf        temporalFlags
		reason    string
		noReplace bool
		noWait    bool
		output    string
	)
	cmd := &cobra.Command{
		Use:   "drain <node>",
		Short: "Drain and replace a node through the DrainAndReplace workflow",
		Long: `drain starts the DrainAndReplace workflow (id disrupt/<reason>/<node>, or
disrupt/<reason>/<pseudonym of the node> with payload encryption on): it launches
replacement capacity and waits until it is Ready, evicts the node's pods respecting
PodDisruptionBudgets, then terminates the instance and deletes the Node and NodeClaim.
Running it again for the same node joins the running workflow. Disruption budgets do
not apply to an operator's request; do-not-disrupt annotations do.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := tf.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			// With payload encryption on, the workflow id carries the node
			// name's pseudonym, as the worker's own drains do.
			ref, private := args[0], tf.keyring != nil
			if private {
				ref = tf.keyring.Pseudonym(args[0])
			}
			id := workflows.DisruptWorkflowID(reason, ref)
			run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{
				ID: id, TaskQueue: workflows.TaskQueue,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			}, workflows.DrainAndReplaceWorkflow, workflows.DisruptInput{
				NodeName: args[0], Reason: reason, Replace: !noReplace, SkipBudgets: true, Private: private,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "drain %s: workflow %s (run %s)\n", args[0], id, run.GetRunID())
			if noWait {
				return nil
			}
			return printDrainResult(cmd.Context(), run, output)
		},
	}
	tf.add(cmd)
	cmd.Flags().StringVar(&reason, "reason", saga.ReasonManual, "disruption reason (part of the workflow id)")
	cmd.Flags().BoolVar(&noReplace, "no-replace", false, "do not launch replacement capacity first")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "start the workflow and return")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

func printDrainResult(ctx context.Context, run client.WorkflowRun, output string) error {
	var res workflows.DisruptResult
	if err := run.Get(ctx, &res); err != nil {
		return err
	}
	if output == "json" {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("outcome: %s\n", res.Outcome)
	if res.Why != "" {
		fmt.Printf("why: %s\n", res.Why)
	}
	fmt.Printf("replacements: %v\nevicted: %d\ndeleted at deadline: %d\n", res.Replacements, res.Evicted, res.Deleted)
	if res.Outcome == workflows.PhaseSkipped {
		return exitError{code: exitNotSettled, err: fmt.Errorf("node not drained: %s", res.Why)}
	}
	return nil
}
