package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/joinery/joinery/preview/live"
	"github.com/joinery/joinery/preview/whatif"
	"github.com/joinery/joinery/solver"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
)

// whatIfFlags are `starter what-if`'s flags.
type whatIfFlags struct {
	files               []string
	rebalance           bool
	kubeconfig, output  string
	region, ec2Endpoint string
	timing              whatif.Timing
	budget              time.Duration
}

// newWhatIfCommand is `starter what-if`: a read-only preview of applying
// NodePools and EC2NodeClasses, or of re-planning the whole cluster.
func newWhatIfCommand() *cobra.Command {
	f := whatIfFlags{timing: whatif.DefaultTiming}
	cmd := &cobra.Command{
		Use:   "what-if -f nodepools.yaml | what-if --rebalance",
		Short: "Preview a NodePool / EC2NodeClass change on the running cluster (drift, order, plan, cost), or a whole-cluster re-plan",
		Long: `what-if -f file reads the running cluster (read-only) and says what applying the file's
NodePools and EC2NodeClasses would do: which nodes would drift and why (the controller's drift
rules), in what order the Drifted budgets let them go and about how long that takes (a pass
every --pass-interval, each node's replacement launched (--launch-time) and drained
(--drain-time) before the next, as the Consolidation workflow does), the replacement plan (the
solver over the controller's snapshot with the drifted nodes gone), the nodes' cost per hour
before and after, and the pods that would have nowhere to go, with the reason.

what-if --rebalance re-plans the whole cluster from scratch now (every pod of a Joinery node
pending; with -f, over the file's NodePools) and prints its cost beside today's and the
solver's lower bound on any plan.

Prices are the live EC2 market's with --region or --ec2-endpoint (as the worker reads them),
else the embedded catalog's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWhatIf(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "manifest with NodePools and EC2NodeClasses (repeatable)")
	fl.BoolVar(&f.rebalance, "rebalance", false, "re-plan the whole cluster from scratch, with the solver's lower bound")
	fl.StringVar(&f.kubeconfig, "kubeconfig", defaultKubeconfig(), "kubeconfig (default $KUBECONFIG, else the local world's)")
	fl.StringVarP(&f.output, "output", "o", "text", "text or json")
	fl.StringVar(&f.region, "region", "", "AWS region to read the live market (zones, spot prices) from")
	fl.StringVar(&f.ec2Endpoint, "ec2-endpoint", "", "EC2 endpoint to read the market from (the local world's: see starter dev's output)")
	fl.DurationVar(&f.timing.PassInterval, "pass-interval", f.timing.PassInterval, "the Consolidation workflow's pass interval (the worker's)")
	fl.DurationVar(&f.timing.Launch, "launch-time", f.timing.Launch, "estimate: a replacement's launch until Ready")
	fl.DurationVar(&f.timing.Drain, "drain-time", f.timing.Drain, "estimate: a node's drain and termination")
	fl.DurationVar(&f.timing.Horizon, "horizon", f.timing.Horizon, "how far ahead budget schedules are followed")
	fl.DurationVar(&f.budget, "budget", solver.DefaultBudget, "solver time budget (negative: the whole search)")
	return cmd
}

func runWhatIf(cmd *cobra.Command, f whatIfFlags) error {
	if len(f.files) == 0 && !f.rebalance {
		return fmt.Errorf("-f nodepools.yaml or --rebalance is required")
	}
	if f.output != "text" && f.output != "json" {
		return fmt.Errorf("-o must be text or json, not %q", f.output)
	}
	var ch whatif.Change
	if len(f.files) > 0 {
		var notes []string
		var err error
		if ch, notes, err = whatif.ReadChange(f.files...); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
		}
	}
	rc, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", f.kubeconfig, err)
	}
	src, stop, err := live.Open(cmd.Context(), live.Options{REST: rc, Region: f.region, EC2Endpoint: f.ec2Endpoint, Key: localKey(f.ec2Endpoint)})
	if err != nil {
		return err
	}
	defer stop()
	now := time.Now().UTC()
	st := live.Preview(src, ch, now)
	out := whatif.Output{At: now.Truncate(time.Second), Prices: "catalog"}
	if src.Market != nil {
		out.Prices = "ec2"
	}
	if len(f.files) > 0 {
		r := whatif.Analyze(st, ch, f.timing, f.budget)
		out.Change = &r
	}
	if f.rebalance {
		in := st.Before
		if len(f.files) > 0 {
			in = st.After
		}
		r := whatif.RebalancePlan(in, f.budget)
		out.Rebalance = &r
	}
	w := cmd.OutOrStdout()
	if f.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	whatif.WriteText(w, out, f.timing)
	return nil
}
