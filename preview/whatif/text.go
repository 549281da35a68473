package whatif

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/joinery/joinery/preview/planner"
)

// Output is what `starter what-if` prints (-o json: this, as JSON): the
// change's report, the rebalance, or both.
type Output struct {
	At        time.Time  `json:"at"`
	Prices    string     `json:"prices"` // "ec2" (the live market) or "catalog"
	Change    *Report    `json:"change,omitempty"`
	Rebalance *Rebalance `json:"rebalance,omitempty"`
}

// WriteText prints an Output for people (`starter what-if`); t is the
// timing the order was computed with.
func WriteText(w io.Writer, o Output, t Timing) {
	prices := "the embedded catalog (--region or --ec2-endpoint for the live market)"
	if o.Prices == "ec2" {
		prices = "the EC2 market"
	}
	fmt.Fprintf(w, "what-if at %s, prices from %s\n", o.At.Format(time.RFC3339), prices)
	if r := o.Change; r != nil {
		writeChange(w, r, t)
	}
	if r := o.Rebalance; r != nil {
		writeRebalance(w, r)
	}
}

func writeChange(w io.Writer, r *Report, t Timing) {
	fmt.Fprintf(w, "\nDrifted: %d nodes\n", len(r.Drifted))
	if len(r.Drifted) > 0 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tNODEPOOL\tINSTANCE TYPE\tCAPACITY TYPE\tZONE\tUSD/HOUR\tPODS\tREASON")
		var msgs []string
		count := map[string]int{}
		for _, d := range r.Drifted {
			reason := d.Reason
			if d.AlreadyDrifted {
				reason += " (already)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%.4f\t%d\t%s\n", d.Node.Node, d.NodePool, d.InstanceType, d.CapacityType, d.Zone, d.PriceUSDHour, d.Pods, reason)
			if count[d.Message] == 0 {
				msgs = append(msgs, d.Message)
			}
			count[d.Message]++
		}
		tw.Flush()
		for _, m := range msgs {
			fmt.Fprintf(w, "  %d node(s): %s\n", count[m], m)
		}
		for _, d := range r.Drifted {
			for _, b := range d.Blocked {
				fmt.Fprintf(w, "  %s stays drifted: %s\n", d.Node.Node, b)
			}
		}
	}
	if len(r.Order) > 0 {
		fmt.Fprintf(w, "\nOrder (Drifted budgets; a pass every %s, one node at a time: launch ~%s when it has pods, drain ~%s):\n",
			t.PassInterval, t.Launch, t.Drain)
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

func writeRebalance(w io.Writer, r *Rebalance) {
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
func writeClaims(w io.Writer, cs []Claim) {
	if len(cs) == 0 {
		return
	}
	sum := make([]planner.ClaimSummary, len(cs))
	for i, c := range cs {
		sum[i] = planner.ClaimSummary{NodePool: c.NodePool, InstanceType: c.InstanceType, CapacityType: c.CapacityType, Zone: c.Zone,
			PriceUSDHour: c.PriceUSDHour, Pods: len(c.Pods)}
	}
	planner.WriteClaimTable(w, sum)
}

// clock is a duration as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
