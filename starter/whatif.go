package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/joinery/joinery/activities"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/whatif"
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

// whatIfOutput is `-o json`: the change's report, the rebalance, or both.
type whatIfOutput struct {
	At        time.Time         `json:"at"`
	Prices    string            `json:"prices"` // "ec2" or "catalog"
	Change    *whatif.Report    `json:"change,omitempty"`
	Rebalance *whatif.Rebalance `json:"rebalance,omitempty"`
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
	acts, stop, err := activities.NewPreview(cmd.Context(), activities.PreviewOptions{REST: rc, Region: f.region, EC2Endpoint: f.ec2Endpoint})
	if err != nil {
		return err
	}
	defer stop()
	now := time.Now().UTC()
	st := acts.Preview(ch, now)
	out := whatIfOutput{At: now.Truncate(time.Second), Prices: "catalog"}
	if acts.Market != nil {
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
	writeWhatIf(w, out, f)
	return nil
}

func writeWhatIf(w io.Writer, o whatIfOutput, f whatIfFlags) {
	prices := "the embedded catalog (--region or --ec2-endpoint for the live market)"
	if o.Prices == "ec2" {
		prices = "the EC2 market"
	}
	fmt.Fprintf(w, "what-if at %s, prices from %s\n", o.At.Format(time.RFC3339), prices)
	if r := o.Change; r != nil {
		writeChange(w, r, f)
	}
	if r := o.Rebalance; r != nil {
		writeRebalance(w, r)
	}
}

func writeChange(w io.Writer, r *whatif.Report, f whatIfFlags) {
	fmt.Fprintf(w, "\nDrifted: %d nodes\n", len(r.Drifted))
	if len(r.Drifted) > 0 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tNODEPOOL\tINSTANCE TYPE\tCAPACITY TYPE\tZONE\tUSD/HOUR\tPODS\tREASON")
		for _, d := range r.Drifted {
			note := d.Reason + ": " + d.Message
			if d.AlreadyDrifted {
				note += " (drifted already)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%.4f\t%d\t%s\n", d.Node.Node, d.NodePool, d.InstanceType, d.CapacityType, d.Zone, d.PriceUSDHour, d.Pods, note)
		}
		tw.Flush()
		for _, d := range r.Drifted {
			for _, b := range d.Blocked {
				fmt.Fprintf(w, "  %s stays drifted: %s\n", d.Node.Node, b)
			}
		}
	}
	if len(r.Order) > 0 {
		fmt.Fprintf(w, "\nOrder (Drifted budgets; a pass every %s, one node at a time: launch ~%s when it has pods, drain ~%s):\n",
			f.timing.PassInterval, f.timing.Launch, f.timing.Drain)
		for i, s := range r.Order {
			wait := ""
			if s.Waited > 0 {
				wait = fmt.Sprintf(" (budget held it %s)", s.Waited)
			}
			fmt.Fprintf(w, "  %d. %-8s %s (%s), gone at %s%s\n", i+1, "+"+clock(s.Start), s.Node, s.NodePool, "+"+clock(s.End), wait)
		}
		fmt.Fprintf(w, "  all replaced after about %s\n", clock(r.Total))
	}
	for _, h := range r.Held {
		fmt.Fprintf(w, "  held: %s: %s\n", h.Node, h.Why)
	}
	fmt.Fprintf(w, "\nReplacement plan: %d new nodes (%d pods placed on nodes that stay)\n", len(r.Replacements), r.Placed)
	writeClaims(w, r.Replacements)
	if len(r.Unschedulable) == 0 {
		fmt.Fprintln(w, "Unschedulable: none")
	}
	for _, u := range r.Unschedulable {
		from := "pending now"
		if u.From != "" {
			from = "from " + u.From
		}
		fmt.Fprintf(w, "Unschedulable %s (%s): %s\n", u.Pod, from, u.Reason)
	}
	fmt.Fprintf(w, "Cost: %.4f USD/hour now -> %.4f USD/hour after (%+.4f)\n", r.BeforeUSDHour, r.AfterUSDHour, r.AfterUSDHour-r.BeforeUSDHour)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func writeRebalance(w io.Writer, r *whatif.Rebalance) {
	fmt.Fprintf(w, "\nRebalance: the cluster re-planned from scratch now\n")
	writeClaims(w, r.Nodes)
	for _, u := range r.Unschedulable {
		fmt.Fprintf(w, "Unschedulable %s: %s\n", u.Pod, u.Reason)
	}
	if r.Kept > 0 {
		fmt.Fprintf(w, "Kept: %d nodes no NodePool owns, %.4f USD/hour\n", r.Kept, r.KeptUSDHour)
	}
	fmt.Fprintf(w, "Now: %.4f USD/hour; re-planned: %.4f USD/hour (%+.4f)\n", r.NowUSDHour, r.PlanUSDHour, r.PlanUSDHour-r.NowUSDHour)
	fmt.Fprintf(w, "Lower bound on any plan: %.4f USD/hour (re-planned / bound %.3f)\n", r.LowerBoundUSDHour, r.Ratio)
}

// writeClaims prints new nodes grouped as `starter plan` does.
func writeClaims(w io.Writer, cs []whatif.Claim) {
	if len(cs) == 0 {
		return
	}
	type row struct {
		pool, it, ct, zone string
		nodes, pods        int
		price              float64
	}
	rows := map[string]*row{}
	for _, c := range cs {
		k := strings.Join([]string{c.NodePool, c.InstanceType, c.CapacityType, c.Zone}, "\x00")
		if rows[k] == nil {
			rows[k] = &row{pool: c.NodePool, it: c.InstanceType, ct: c.CapacityType, zone: c.Zone}
		}
		rows[k].nodes++
		rows[k].pods += len(c.Pods)
		rows[k].price += c.PriceUSDHour
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODEPOOL\tINSTANCE TYPE\tCAPACITY TYPE\tZONE\tNODES\tPODS\tUSD/HOUR")
	for _, k := range keys {
		x := rows[k]
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%.4f\n", x.pool, x.it, x.ct, x.zone, x.nodes, x.pods, x.price)
	}
	tw.Flush()
}

// clock is a duration as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
