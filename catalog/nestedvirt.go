package catalog

import (
	_ "embed"
	"fmt"
)

//go:embed data/nested-virtualization.csv
var nestedVirtualizationCSV []byte

// SetNestedVirtualization marks the virtual (not bare metal) types of the
// families a nested virtualization CSV lists (data/README.md) as
// supporting it. The embedded list is AWS's documented one, which the
// live DescribeInstanceTypes answer may outgrow: a type missing from it is
// refused rather than a launch that EC2 would refuse allowed.
func (c *Catalog) SetNestedVirtualization(familiesCSV []byte) error {
	families := map[string]bool{}
	err := eachRow(familiesCSV, func(get func(string) string) error {
		f := get("family")
		if f == "" || get("source") == "" {
			return fmt.Errorf("row %q: a family and its source are needed", f)
		}
		families[f] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("nested virtualization: %w", err)
	}
	for _, it := range c.Types {
		if families[it.Family] && !it.BareMetal {
			it.NestedVirtualization = true
		}
	}
	return nil
}
