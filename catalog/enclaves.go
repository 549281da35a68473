package catalog

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed data/nitro-enclaves.csv
var nitroEnclavesCSV []byte

// enclavesNewestGeneration is the newest generation the embedded rule
// speaks to as a whole: AWS's 2024 requirements already exclude most
// 7th generation families one by one, and later families are not named at
// all, so those (save the families the CSV marks "documented") are
// refused rather than guessed (data/README.md).
const enclavesNewestGeneration = 6

// acceleratedCategories are the accelerated computing families' categories
// (GPU, FPGA, inference, training, video): the floor refuses them all, as
// the catalog does not count every accelerator (FPGAs, fractional GPUs).
var acceleratedCategories = map[string]bool{"dl": true, "f": true, "g": true, "gr": true, "inf": true, "p": true, "trn": true, "vt": true}

// SetNitroEnclaves marks the types a Nitro Enclaves CSV and AWS's parent
// instance requirements admit (data/README.md): virtualized Nitro types,
// Intel or AMD with at least 4 vCPUs or Graviton with at least 2, not of
// an excluded family ("u-*" a prefix), of generation 6 or older or of a
// family marked documented, and with no GPU or accelerator (the
// requirements name accelerated families one by one; those launched since
// are not dated by their generation). A floor: EC2 may accept more, never
// less (with live instance types, DescribeInstanceTypes' answer is used).
func (c *Catalog) SetNitroEnclaves(familiesCSV []byte) error {
	excluded, documented := map[string]bool{}, map[string]bool{}
	var prefixes []string
	err := eachRow(familiesCSV, func(get func(string) string) error {
		f, kind := get("family"), get("enclaves")
		switch {
		case f == "" || get("source") == "":
			return fmt.Errorf("row %q: a family and its source are needed", f)
		case kind == "documented":
			documented[f] = true
		case kind != "excluded":
			return fmt.Errorf("row %q: enclaves %q is neither excluded nor documented", f, kind)
		case strings.HasSuffix(f, "*"):
			prefixes = append(prefixes, strings.TrimSuffix(f, "*"))
		default:
			excluded[f] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nitro enclaves: %w", err)
	}
	for _, it := range c.Types {
		out := excluded[it.Family] || hasAnyPrefix(it.Family, prefixes) ||
			(it.Generation > enclavesNewestGeneration && !documented[it.Family])
		it.NitroEnclaves = !out && enclaveParent(it)
	}
	return nil
}

// enclaveParent is AWS's rule for a parent instance before its exclusions:
// a virtualized Nitro type with enough vCPUs for its processor, and (the
// floor) no GPU or accelerator.
func enclaveParent(it *InstanceType) bool {
	if it.Hypervisor != "nitro" || it.BareMetal || it.GPUCount > 0 || it.AcceleratorCount > 0 || acceleratedCategories[it.Category] {
		return false
	}
	switch it.CPUManufacturer {
	case "intel", "amd":
		return it.VCPU >= 4
	case "aws":
		return it.VCPU >= 2
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
