package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/schedulerconfig"
	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/solver"
	"github.com/spf13/cobra"
)

// newPlanCommand is `starter plan`: the offline planner. It reads
// manifests, solves, and prints the plan with its $/hour, a lower bound on
// any plan's cost, their ratio and the solve time; a static NodePool's
// replicas are nodes of the plan, with their cost and the pods they take.
// No cluster, cloud or Temporal is needed.
func newPlanCommand() *cobra.Command {
	var files []string
	var catalogPath, output, schedConfig string
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "plan -f nodepools.yaml -f workloads.yaml [--catalog types.csv] [--scheduler-config file] [--budget 1s] [-o table|json]",
		Short: "Plan nodes for manifests offline: the plan, its USD/hour, a lower bound and the solve time",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("at least one -f manifest file is required")
			}
			if output != "table" && output != "json" {
				return fmt.Errorf("-o must be table or json, not %q", output)
			}
			var opts planner.Options
			if catalogPath != "" {
				data, err := os.ReadFile(catalogPath)
				if err != nil {
					return err
				}
				cat, err := catalog.Parse(data, nil)
				if err != nil {
					return fmt.Errorf("--catalog %s: %w", catalogPath, err)
				}
				opts.Catalog = cat
			}
			if schedConfig != "" {
				sd, err := schedulerconfig.Load(schedConfig)
				if err != nil {
					return err
				}
				opts.SpreadDefaults = sd
			}
			docs, errs := planner.ReadFiles(files...)
			built, berrs := planner.Build(docs, opts)
			errs = append(errs, berrs...)
			if len(errs) > 0 {
				return fmt.Errorf("bad manifests:\n%s", errs.Error())
			}
			for _, w := range built.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", w)
			}
			built.Input.Budget = budget
			res := planner.SolveAll(built)
			cat := opts.Catalog
			if cat == nil {
				cat = catalog.MustDefault()
			}
			list := listPrice(cat, res)
			if output == "json" {
				return writePlanJSON(cmd.OutOrStdout(), res, built.Overlays, list)
			}
			writePlanTable(cmd.OutOrStdout(), built.Input, res)
			if len(built.Overlays) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Prices after NodeOverlays %s; at list prices: %.4f USD/hour\n", strings.Join(built.Overlays, ", "), list)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file (repeatable; multi-document YAML)")
	cmd.Flags().StringVar(&catalogPath, "catalog", "", "instance-type CSV (schema of catalog/data/ec2-instance-types.csv; missing columns allowed)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	cmd.Flags().StringVar(&schedConfig, "scheduler-config", "", "kube-scheduler's KubeSchedulerConfiguration: pods without topology spread constraints get its default constraints (empty: none)")
	cmd.Flags().DurationVar(&budget, "budget", solver.DefaultBudget, "solver time budget (the first plan is always complete; negative: the whole search)")
	return cmd
}

type jsonClaim struct {
	// Node names a static pool's node (the pods placed on it name it too).
	Node          string   `json:"node,omitempty"`
	NodePool      string   `json:"nodePool"`
	InstanceType  string   `json:"instanceType"`
	CapacityType  string   `json:"capacityType"`
	Zone          string   `json:"zone"`
	PriceUSDHour  float64  `json:"priceUSDPerHour"`
	InstanceTypes []string `json:"instanceTypes"`
	Pods          []string `json:"pods"`
}

type jsonPlan struct {
	NewNodeClaims []jsonClaim `json:"newNodeClaims"`
	// StaticNodeClaims are the static NodePools' replicas, launched
	// whatever the pods; their pods are the plan's pods placed there.
	StaticNodeClaims   []jsonClaim            `json:"staticNodeClaims,omitempty"`
	StaticPriceUSDHour float64                `json:"staticPriceUSDPerHour,omitempty"`
	ExistingPlacements []solver.Placement     `json:"existingPlacements"`
	Unschedulable      []solver.Unschedulable `json:"unschedulable"`
	PriceUSDHour       float64                `json:"priceUSDPerHour"`
	LowerBoundUSDHour  float64                `json:"lowerBoundUSDPerHour"`
	Ratio              float64                `json:"ratio"`
	SolveSeconds       float64                `json:"solveSeconds"`
	// Overlays are the NodeOverlays the prices include; ListPrice is
	// the new nodes at list prices.
	Overlays         []string `json:"overlays,omitempty"`
	ListPriceUSDHour float64  `json:"listPriceUSDPerHour"`
}

func claimJSON(nc *solver.NewNodeClaim) jsonClaim {
	j := jsonClaim{NodePool: nc.NodePool, PriceUSDHour: nc.Price(), Pods: nc.Pods}
	if len(nc.InstanceTypes) > 0 {
		o := solver.CheapestOffering(nc.InstanceTypes[0].Offerings)
		j.InstanceType, j.CapacityType, j.Zone = nc.InstanceTypes[0].Type.Name, o.CapacityType, o.Zone
	}
	for _, o := range nc.InstanceTypes {
		j.InstanceTypes = append(j.InstanceTypes, o.Type.Name)
	}
	return j
}

// listPrice is the plan's new nodes (static ones included) at their types'
// list prices (on-demand, or the spot estimate), whatever NodeOverlays say.
func listPrice(cat *catalog.Catalog, r planner.Result) float64 {
	var usd float64
	claims := slices.Clone(r.Plan.NewNodeClaims)
	for _, sn := range r.Static {
		claims = append(claims, sn.Claim)
	}
	for i := range claims {
		j := claimJSON(&claims[i])
		if it, ok := cat.Get(j.InstanceType); ok {
			usd += it.ListPrice(j.CapacityType)
		}
	}
	return usd
}

func writePlanJSON(w io.Writer, r planner.Result, overlays []string, list float64) error {
	out := jsonPlan{ExistingPlacements: r.Plan.ExistingPlacements, Unschedulable: r.Plan.Unschedulable,
		PriceUSDHour: r.Price, LowerBoundUSDHour: r.LowerBound, Ratio: r.Ratio, SolveSeconds: r.SolveTime.Seconds(),
		Overlays: overlays, ListPriceUSDHour: list}
	for i := range r.Plan.NewNodeClaims {
		out.NewNodeClaims = append(out.NewNodeClaims, claimJSON(&r.Plan.NewNodeClaims[i]))
	}
	out.StaticNodeClaims, out.StaticPriceUSDHour = staticJSON(r), r.StaticPrice
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writePlanTable(w io.Writer, in solver.Input, r planner.Result) {
	static := staticJSON(r)
	onStatic := 0
	for _, j := range static {
		onStatic += len(j.Pods)
	}
	fmt.Fprintf(w, "New nodes: %d for %d pending pods (%d placed on existing nodes)\n", len(r.Plan.NewNodeClaims)+len(static), len(in.Pods),
		len(r.Plan.ExistingPlacements)-onStatic)
	if len(static) > 0 {
		fmt.Fprintf(w, "Static NodePools: %d of the nodes, launched whatever the pods, %.4f USD/hour (%d pending pods placed on them)\n",
			len(static), r.StaticPrice, onStatic)
	}
	sum := make([]planner.ClaimSummary, 0, len(r.Plan.NewNodeClaims)+len(static))
	for i := range r.Plan.NewNodeClaims {
		sum = append(sum, claimSummary(claimJSON(&r.Plan.NewNodeClaims[i])))
	}
	for _, j := range static {
		sum = append(sum, claimSummary(j))
	}
	planner.WriteClaimTable(w, sum)
	for _, s := range r.StaticShort {
		fmt.Fprintf(w, "Short: %s\n", s)
	}
	for _, u := range r.Plan.Unschedulable {
		fmt.Fprintf(w, "Unschedulable %s: %s\n", u.Pod, u.Reason)
	}
	fmt.Fprintf(w, "Total: %.4f USD/hour\n", r.Price)
	fmt.Fprintf(w, "Lower bound on any plan: %.4f USD/hour (ratio %.3f)\n", r.LowerBound, r.Ratio)
	fmt.Fprintf(w, "Solve time: %s\n", r.SolveTime.Round(10_000))
}

func claimSummary(j jsonClaim) planner.ClaimSummary {
	return planner.ClaimSummary{NodePool: j.NodePool, InstanceType: j.InstanceType, CapacityType: j.CapacityType, Zone: j.Zone,
		PriceUSDHour: j.PriceUSDHour, Pods: len(j.Pods)}
}

// staticJSON is the static pools' nodes, each with the plan's pods placed
// on it.
func staticJSON(r planner.Result) []jsonClaim {
	byNode := map[string][]string{}
	for _, p := range r.Plan.ExistingPlacements {
		byNode[p.Node] = append(byNode[p.Node], p.Pod)
	}
	var out []jsonClaim
	for i := range r.Static {
		j := claimJSON(&r.Static[i].Claim)
		j.Node, j.Pods = r.Static[i].Node, byNode[r.Static[i].Node]
		out = append(out, j)
	}
	return out
}
