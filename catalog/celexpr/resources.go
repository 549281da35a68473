package celexpr

import (
	"fmt"
	"math"
)

// Karpenter rounds reservation results up to the granularity users write
// them at (10m of CPU, 16Mi of memory): never below what was asked, and
// types whose results differ by less share a launch template.
const (
	cpuRoundingMilli = 10
	memoryRoundingMi = 16
)

// Quantity renders a kubeReserved or systemReserved expression's result as
// the quantity of its resource, in the unit expressions are written in:
// cpu millicores (rounded up to 10m), memory MiB (rounded up to 16Mi),
// ephemeral-storage GiB, pid a count.
func Quantity(resourceName string, result int64) string {
	switch resourceName {
	case "cpu":
		return fmt.Sprintf("%dm", roundUp(result, cpuRoundingMilli))
	case "memory":
		return fmt.Sprintf("%dMi", roundUp(result, memoryRoundingMi))
	case "ephemeral-storage":
		return fmt.Sprintf("%dGi", result)
	}
	return fmt.Sprint(result)
}

// roundUp rounds v up to a multiple of step; a value so large it would
// overflow stays as it is rather than turn negative.
func roundUp(v, step int64) int64 {
	if v <= 0 || v%step == 0 || v > math.MaxInt64-step {
		return v
	}
	return (v/step + 1) * step
}
