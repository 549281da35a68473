package planner

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// ClaimSummary is one new NodeClaim as the CLIs print it: its pool, the
// offering it is priced at, and its pods.
type ClaimSummary struct {
	NodePool, InstanceType, CapacityType, Zone string
	PriceUSDHour                               float64
	Pods                                       int
}

// WriteClaimTable prints new NodeClaims grouped by pool, type, capacity
// type and zone, with their nodes, pods and USD/hour (`starter plan`,
// `starter what-if`).
func WriteClaimTable(w io.Writer, cs []ClaimSummary) {
	type row struct {
		ClaimSummary
		nodes int
	}
	rows := map[string]*row{}
	for _, c := range cs {
		k := strings.Join([]string{c.NodePool, c.InstanceType, c.CapacityType, c.Zone}, "\x00")
		if rows[k] == nil {
			rows[k] = &row{ClaimSummary: ClaimSummary{NodePool: c.NodePool, InstanceType: c.InstanceType, CapacityType: c.CapacityType, Zone: c.Zone}}
		}
		rows[k].nodes++
		rows[k].Pods += c.Pods
		rows[k].PriceUSDHour += c.PriceUSDHour
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%.4f\n", x.NodePool, x.InstanceType, x.CapacityType, x.Zone, x.nodes, x.Pods, x.PriceUSDHour)
	}
	tw.Flush()
}
