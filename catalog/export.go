package catalog

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ExportColumns are the columns WriteCSV writes: the embedded CSV's schema
// (data/README.md) for every fact the catalog holds, then what makes a
// catalog region-true: zones (the zones selling the type, ";"-separated),
// spot_usd_per_hour (zone=price pairs, ";"-separated), the EBS attachment
// limit, the Spot Instance Advisor saving, nested virtualization and
// Nitro Enclaves support. Parse reads them all back.
var ExportColumns = []string{"instance_type", "family", "category", "generation", "size", "architecture", "vcpu", "memory_mib",
	"gpu_count", "gpu_manufacturer", "gpu_name", "gpu_memory_mib", "accelerator_count", "accelerator_manufacturer", "accelerator_name",
	"local_nvme_gb", "max_enis", "default_card_max_enis", "network_cards", "ipv4_per_eni", "max_pods", "efa_count",
	"network_bandwidth_mbps", "network_performance", "ebs_bandwidth_mbps", "hypervisor", "bare_metal", "cpu_manufacturer",
	"ondemand_usd_per_hour", "zones", "spot_usd_per_hour", "max_ebs_attachments", "attachment_limit_type", "savings_vs_ondemand_pct",
	"nested_virtualization", "nitro_enclaves"}

// WithMarket returns a catalog of the same types that also says which zones
// sell each type and its spot price per zone (nil maps: unknown, every
// zone and the static spot price, as the embedded catalog). The maps are
// kept, not copied.
func (c *Catalog) WithMarket(zones map[string][]string, spot map[string]map[string]float64) *Catalog {
	out := New(c.Types)
	out.zones, out.spot = zones, spot
	return out
}

// Market returns a Market holding the catalog's zones and spot prices
// (what WithMarket or an exported CSV gave it), or nil when it has none.
func (c *Catalog) Market() *Market {
	if c == nil || (len(c.zones) == 0 && len(c.spot) == 0) {
		return nil
	}
	m := NewMarket()
	m.SetZones(c.zones)
	m.SetSpotPrices(c.spot)
	return m
}

// Zones is every zone the catalog's market data names, sorted (nil
// without market data).
func (c *Catalog) Zones() []string {
	set := map[string]bool{}
	for _, zs := range c.zones {
		for _, z := range zs {
			set[z] = true
		}
	}
	for _, byZone := range c.spot {
		for z := range byZone {
			set[z] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// WriteCSV writes the catalog in the ExportColumns schema, one row per type
// (sorted by name), prices with 6 decimals as EC2 writes them.
func WriteCSV(w io.Writer, c *Catalog) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ExportColumns); err != nil {
		return err
	}
	itoa := strconv.Itoa
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	price := func(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
	for _, it := range c.Types {
		zones := slices.Clone(c.zones[it.Name])
		slices.Sort(zones)
		var spot []string
		for _, z := range slices.Sorted(maps.Keys(c.spot[it.Name])) {
			spot = append(spot, z+"="+price(c.spot[it.Name][z]))
		}
		savings := ""
		if it.SpotSavingsPct >= 0 {
			savings = itoa(it.SpotSavingsPct)
		}
		ebs := ""
		if it.MaxEBSAttachments > 0 {
			ebs = itoa(it.MaxEBSAttachments)
		}
		row := []string{it.Name, it.Family, it.Category, itoa(it.Generation), it.Size, it.Arch, itoa(it.VCPU), i64(it.MemoryMiB),
			itoa(it.GPUCount), it.GPUManufacturer, it.GPUName, i64(it.GPUMemoryMiB), itoa(it.AcceleratorCount), it.AcceleratorManufacturer, it.AcceleratorName,
			i64(it.LocalNVMeGB), itoa(it.MaxENIs), itoa(it.DefaultCardMaxENIs), itoa(it.NetworkCards), itoa(it.IPv4PerENI), itoa(it.MaxPods), itoa(it.EFACount),
			i64(it.NetworkBandwidthMbps), it.NetworkPerformance, i64(it.EBSBandwidthMbps), it.Hypervisor, strconv.FormatBool(it.BareMetal), it.CPUManufacturer,
			price(it.OnDemandPrice), strings.Join(zones, ";"), strings.Join(spot, ";"), ebs, it.EBSAttachmentType, savings,
			strconv.FormatBool(it.NestedVirtualization), strconv.FormatBool(it.NitroEnclaves)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// PriceTypes gives each type its on-demand price from onDemand (the
// Pricing API's) when it has one, keeps the type's own price otherwise,
// and leaves out the types with neither (Karpenter offers no type it
// cannot price): the kept types and how many were left out. It sets the
// price on the types given.
func PriceTypes(types []*InstanceType, onDemand map[string]float64) ([]*InstanceType, int) {
	var kept []*InstanceType
	for _, it := range types {
		if p := onDemand[it.Name]; p > 0 {
			it.OnDemandPrice = p
		}
		if it.OnDemandPrice > 0 {
			kept = append(kept, it)
		}
	}
	return kept, len(types) - len(kept)
}

// parseMarketColumns reads a row's zones and spot_usd_per_hour cells.
func parseMarketColumns(name, zones, spot string) ([]string, map[string]float64, error) {
	var zs []string
	for _, z := range strings.Split(zones, ";") {
		if z = strings.TrimSpace(z); z != "" {
			zs = append(zs, z)
		}
	}
	var prices map[string]float64
	for _, pair := range strings.Split(spot, ";") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		z, p, ok := strings.Cut(pair, "=")
		v, err := strconv.ParseFloat(p, 64)
		if !ok || z == "" || err != nil || !(v > 0) {
			return nil, nil, fmt.Errorf("%s spot_usd_per_hour %q: want zone=price pairs separated by ';' (price > 0)", name, pair)
		}
		if prices == nil {
			prices = map[string]float64{}
		}
		prices[z] = v
	}
	return zs, prices, nil
}

func appendFloat(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'f', -1, 64) }
