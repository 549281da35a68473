package catalog

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/ec2-instance-types.csv
var instanceTypesCSV []byte

//go:embed data/ec2-spot-savings.csv
var spotSavingsCSV []byte

//go:embed data/ebs-attachment-limits.csv
var ebsLimitsCSV []byte

// Catalog is the set of instance types Joinery can launch, sorted by name.
type Catalog struct {
	Types  []*InstanceType
	byName map[string]*InstanceType
	// zones and spot, when set (WithMarket, or the zones and
	// spot_usd_per_hour columns of an exported CSV), are the region-true
	// offerings of the types (Market).
	zones map[string][]string
	spot  map[string]map[string]float64
}

var (
	loadOnce sync.Once
	loaded   *Catalog
	loadErr  error
)

// Default returns the embedded us-east-1 catalog, parsed once. Only types
// that can be Kubernetes nodes are kept: a known architecture, vCPU, memory
// and on-demand price, and not mac* (Dedicated Hosts only).
func Default() (*Catalog, error) {
	loadOnce.Do(func() {
		if loaded, loadErr = Parse(instanceTypesCSV, spotSavingsCSV); loadErr == nil {
			loadErr = errors.Join(loaded.SetEBSLimits(ebsLimitsCSV), loaded.SetNestedVirtualization(nestedVirtualizationCSV),
				loaded.SetNitroEnclaves(nitroEnclavesCSV))
		}
	})
	return loaded, loadErr
}

// SetEBSLimits reads an EBS attachment limits CSV (data/README.md) into the
// catalog's types; types it does not list keep the driver's default.
func (c *Catalog) SetEBSLimits(limitsCSV []byte) error {
	err := eachRow(limitsCSV, func(get func(string) string) error {
		it, ok := c.byName[get("instance_type")]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(get("max_ebs_attachments"))
		if err != nil || n < 1 {
			return fmt.Errorf("%s max_ebs_attachments %q: not a positive integer", it.Name, get("max_ebs_attachments"))
		}
		switch t := get("attachment_limit_type"); t {
		case "shared", "dedicated":
			it.MaxEBSAttachments, it.EBSAttachmentType = n, t
		default:
			return fmt.Errorf("%s attachment_limit_type %q: want shared or dedicated", it.Name, t)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("EBS attachment limits: %w", err)
	}
	return nil
}

// MustDefault is Default for tests and programs that cannot run without it.
func MustDefault() *Catalog {
	c, err := Default()
	if err != nil {
		panic(err)
	}
	return c
}

// Get returns the instance type with the given name.
func (c *Catalog) Get(name string) (*InstanceType, bool) {
	if c == nil {
		return nil, false
	}
	it, ok := c.byName[name]
	return it, ok
}

// New builds a catalog from a list of types (used by tests and by callers
// that narrow the embedded catalog).
func New(types []*InstanceType) *Catalog {
	c := &Catalog{byName: map[string]*InstanceType{}}
	for _, it := range types {
		c.Types = append(c.Types, it)
		c.byName[it.Name] = it
	}
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Name < c.Types[j].Name })
	return c
}

// Parse reads the instance-type CSV and the spot-savings CSV (formats in
// data/README.md). Empty cells mean unknown. Columns may be missing (only
// instance_type, vcpu, memory_mib and ondemand_usd_per_hour are needed; a
// missing architecture column means amd64) and savingsCSV may be empty (spot
// then costs the on-demand price).
func Parse(typesCSV, savingsCSV []byte) (*Catalog, error) {
	savings := map[string]int{}
	if len(bytes.TrimSpace(savingsCSV)) > 0 {
		if err := parseSavings(savingsCSV, savings); err != nil {
			return nil, err
		}
	}
	defaultArch := ""
	if !hasColumn(typesCSV, "architecture") {
		defaultArch = "amd64"
	}
	return parseTypes(typesCSV, savings, defaultArch)
}

func hasColumn(data []byte, col string) bool {
	header, err := csv.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		return false
	}
	for _, h := range header {
		if strings.TrimSpace(h) == col {
			return true
		}
	}
	return false
}

func parseSavings(savingsCSV []byte, savings map[string]int) error {
	if err := eachRow(savingsCSV, func(get func(string) string) error {
		pct, err := strconv.Atoi(get("savings_vs_ondemand_pct"))
		if err != nil {
			return fmt.Errorf("savings_vs_ondemand_pct: %w", err)
		}
		savings[get("instance_type")] = pct
		return nil
	}); err != nil {
		return fmt.Errorf("spot savings: %w", err)
	}
	return nil
}

func parseTypes(typesCSV []byte, savings map[string]int, defaultArch string) (*Catalog, error) {
	var types []*InstanceType
	zones, spot := map[string][]string{}, map[string]map[string]float64{}
	err := eachRow(typesCSV, func(get func(string) string) error {
		arch := get("architecture")
		if arch == "" {
			arch = defaultArch
		}
		it := &InstanceType{
			Name: get("instance_type"), Family: get("family"), Category: get("category"),
			Size: get("size"), Arch: arch,
			GPUManufacturer: get("gpu_manufacturer"), GPUName: get("gpu_name"),
			AcceleratorManufacturer: get("accelerator_manufacturer"), AcceleratorName: get("accelerator_name"),
			Hypervisor: get("hypervisor"), CPUManufacturer: get("cpu_manufacturer"),
			BareMetal: get("bare_metal") == "true", SpotSavingsPct: -1,
			NestedVirtualization: get("nested_virtualization") == "true",
			NitroEnclaves:        get("nitro_enclaves") == "true",
			NetworkPerformance:   get("network_performance"),
		}
		if strings.HasPrefix(it.Family, "mac") || it.Arch == "" || get("vcpu") == "" ||
			get("memory_mib") == "" || get("ondemand_usd_per_hour") == "" {
			return nil
		}
		var err error
		ints := []struct {
			col string
			dst *int
		}{{"generation", &it.Generation}, {"vcpu", &it.VCPU}, {"gpu_count", &it.GPUCount},
			{"accelerator_count", &it.AcceleratorCount}, {"max_pods", &it.MaxPods}, {"efa_count", &it.EFACount},
			{"max_enis", &it.MaxENIs}, {"default_card_max_enis", &it.DefaultCardMaxENIs}, {"network_cards", &it.NetworkCards},
			{"ipv4_per_eni", &it.IPv4PerENI}}
		for _, f := range ints {
			if *f.dst, err = atoiEmpty(get(f.col)); err != nil {
				return fmt.Errorf("%s %s: %w", it.Name, f.col, err)
			}
		}
		int64s := []struct {
			col string
			dst *int64
		}{{"memory_mib", &it.MemoryMiB}, {"gpu_memory_mib", &it.GPUMemoryMiB}, {"local_nvme_gb", &it.LocalNVMeGB},
			{"network_bandwidth_mbps", &it.NetworkBandwidthMbps}, {"ebs_bandwidth_mbps", &it.EBSBandwidthMbps}}
		for _, f := range int64s {
			v, err := atoiEmpty(get(f.col))
			if err != nil {
				return fmt.Errorf("%s %s: %w", it.Name, f.col, err)
			}
			*f.dst = int64(v)
		}
		if it.OnDemandPrice, err = strconv.ParseFloat(get("ondemand_usd_per_hour"), 64); err != nil {
			return fmt.Errorf("%s price: %w", it.Name, err)
		}
		if s, ok := savings[it.Name]; ok {
			it.SpotSavingsPct = s
		}
		if v := get("savings_vs_ondemand_pct"); v != "" {
			if it.SpotSavingsPct, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("%s savings_vs_ondemand_pct: %w", it.Name, err)
			}
		}
		if v := get("max_ebs_attachments"); v != "" {
			n, err := strconv.Atoi(v)
			t := get("attachment_limit_type")
			if err != nil || n < 1 || (t != "shared" && t != "dedicated") {
				return fmt.Errorf("%s max_ebs_attachments %q, attachment_limit_type %q: want a positive integer and shared or dedicated", it.Name, v, t)
			}
			it.MaxEBSAttachments, it.EBSAttachmentType = n, t
		}
		zs, sp, err := parseMarketColumns(it.Name, get("zones"), get("spot_usd_per_hour"))
		if err != nil {
			return err
		}
		if len(zs) > 0 {
			zones[it.Name] = zs
		}
		if len(sp) > 0 {
			spot[it.Name] = sp
		}
		types = append(types, it)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("instance types: %w", err)
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("instance types: no usable rows")
	}
	c := New(types)
	if len(zones) > 0 {
		c.zones = zones
	}
	if len(spot) > 0 {
		c.spot = spot
	}
	return c, nil
}

func atoiEmpty(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.Atoi(s)
}

func eachRow(data []byte, fn func(get func(string) string) error) error {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return err
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		get := func(col string) string {
			i, ok := idx[col]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		if err := fn(get); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}
