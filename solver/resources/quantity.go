package resources

import "k8s.io/apimachinery/pkg/api/resource"

// Quantity returns entry i as a Kubernetes quantity in its canonical unit.
func (l List) Quantity(i int) resource.Quantity {
	switch i {
	case CPU:
		return *resource.NewMilliQuantity(l[i], resource.DecimalSI)
	case Memory, EphemeralStorage:
		return *resource.NewQuantity(l[i], resource.BinarySI)
	default:
		return *resource.NewQuantity(l[i], resource.DecimalSI)
	}
}
