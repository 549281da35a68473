package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/joinery/joinery/workflows"
	"github.com/spf13/cobra"
)

func newPauseCommand() *cobra.Command {
	var (
		tf     temporalFlags
		dur    time.Duration
		reason string
	)
	cmd := &cobra.Command{
		Use:   "pause-disruption",
		Short: "Stop new voluntary disruptions (consolidation, drift, expiration); interruptions still act",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if reason == "" {
				return fmt.Errorf("--reason is required: say why, it is shown by `starter status`")
			}
			if err := signalConsolidation(cmd.Context(), tf, workflows.SignalPauseDisruption,
				workflows.PauseRequest{Duration: dur, Reason: reason}); err != nil {
				return err
			}
			until := "until resumed"
			if dur > 0 {
				until = "for " + dur.String()
			}
			fmt.Printf("disruption paused %s: %s\n", until, reason)
			return nil
		},
	}
	tf.add(cmd)
	cmd.Flags().DurationVar(&dur, "for", 0, "pause for this long (default: until resume-disruption)")
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	return cmd
}

func newResumeCommand() *cobra.Command {
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "resume-disruption",
		Short: "Let voluntary disruption start again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := signalConsolidation(cmd.Context(), tf, workflows.SignalResumeDisruption, nil); err != nil {
				return err
			}
			fmt.Println("disruption resumed")
			return nil
		},
	}
	tf.add(cmd)
	return cmd
}

func newStatusCommand() *cobra.Command {
	var (
		tf     temporalFlags
		sf     subnetFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the disruption state (paused or not, cost, the nodes not disrupted and why, the last decisions) and the subnets' free addresses",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := tf.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			v, err := c.QueryWorkflow(cmd.Context(), workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
			if err != nil {
				return fmt.Errorf("query %s: %w", workflows.ConsolidationWorkflowID, err)
			}
			var st workflows.ConsolidationStatus
			if err := v.Get(&st); err != nil {
				return err
			}
			sns, err := sf.subnets(cmd.Context())
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: subnets unknown: %v\n", err)
			}
			if output == "json" {
				return json.NewEncoder(os.Stdout).Encode(struct {
					workflows.ConsolidationStatus
					Subnets []subnetStatus `json:"subnets"`
				}{st, sns})
			}
			printStatus(st)
			if err == nil {
				printSubnets(os.Stdout, sns)
			}
			return nil
		},
	}
	tf.add(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "text", "text or json")
	fl.StringVar(&sf.admin, "admin-addr", DefaultAdminAddr, "the admin endpoint of the running `starter dev` (asked for its EC2 endpoint)")
	fl.StringVar(&sf.ec2URL, "ec2-endpoint", "", "EC2 API base URL for the subnets (instead of asking starter dev)")
	fl.StringVar(&sf.region, "region", "", "AWS region (default: the local world's)")
	fl.StringVar(&sf.discoveryTag, "discovery-tag", "production-eks", "karpenter.sh/discovery tag value of the subnets to show")
	fl.BoolVar(&sf.realAWS, "aws", false, "read the subnets from real AWS in --region (credentials from the environment)")
	return cmd
}

func printStatus(st workflows.ConsolidationStatus) {
	switch {
	case st.Paused && !st.PausedUntil.IsZero():
		fmt.Printf("disruption: PAUSED until %s (%s)\n", st.PausedUntil.UTC().Format(time.RFC3339), st.PauseReason)
	case st.Paused:
		fmt.Printf("disruption: PAUSED until resumed (%s)\n", st.PauseReason)
	default:
		fmt.Println("disruption: active")
	}
	fmt.Printf("phase: %s, passes: %d\n", st.Phase, st.Passes)
	fmt.Printf("nodes cost now: %.4f USD/hour", st.USDPerHour)
	if st.ListUSDPerHour > 0 && math.Abs(st.ListUSDPerHour-st.USDPerHour) > 1e-9 {
		fmt.Printf(" after NodeOverlays (%.4f at list prices)", st.ListUSDPerHour)
	}
	fmt.Println()
	if st.Catalog != "" {
		fmt.Printf("catalog: %s\n", st.Catalog)
	}
	printLastPass(st.LastPass)
	if len(st.History) == 0 {
		fmt.Println("no decisions yet")
		return
	}
	fmt.Println("decisions (USD/hour when decided -> outcome):")
	for _, r := range st.History {
		d := r.Decision
		fmt.Printf("  %s %-11s %-14s %.4f  %s -> %s\n", r.At.UTC().Format("15:04:05"), d.Method, d.Reason, d.USDPerHour,
			strings.Join(d.Nodes, ","), r.Outcome)
		if d.Why != "" {
			fmt.Printf("      why: %s\n", d.Why)
		}
	}
}

// printLastPass lists the nodes the last pass did not disrupt, with every
// reason, and the counts by reason.
func printLastPass(lp *workflows.PassReport) {
	if lp == nil {
		return
	}
	fmt.Printf("last pass %s: %s\n", lp.At.UTC().Format("15:04:05"), lp.Why)
	if lp.Total == 0 {
		fmt.Println("no node blocked")
		return
	}
	reasons := make([]string, 0, len(lp.ByReason))
	for r := range lp.ByReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if lp.ByReason[reasons[i]] != lp.ByReason[reasons[j]] {
			return lp.ByReason[reasons[i]] > lp.ByReason[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	var counts []string
	for _, r := range reasons {
		counts = append(counts, fmt.Sprintf("%s %d", r, lp.ByReason[r]))
	}
	fmt.Printf("not disrupted: %d nodes (%s)\n", lp.Total, strings.Join(counts, ", "))
	for _, n := range lp.Nodes {
		name := n.Node
		if name == "" {
			name = "nodeclaim/" + n.NodeClaim
		}
		fmt.Printf("  %s (%s)\n", name, n.NodePool)
		for _, r := range n.Reasons {
			fmt.Printf("      %-22s %s\n", r.Reason, r.Message)
		}
	}
	if len(lp.Nodes) < lp.Total {
		fmt.Printf("  ... and %d more (starter explain node <name>, or the Events)\n", lp.Total-len(lp.Nodes))
	}
}

// signalConsolidation sends a signal to the consolidation singleton.
func signalConsolidation(ctx context.Context, tf temporalFlags, signal string, arg interface{}) error {
	c, err := tf.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SignalWorkflow(ctx, workflows.ConsolidationWorkflowID, "", signal, arg); err != nil {
		return fmt.Errorf("signal %s: %w", workflows.ConsolidationWorkflowID, err)
	}
	return nil
}
