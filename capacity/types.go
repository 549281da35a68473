package capacity

import "github.com/joinery/joinery/catalog"

// InstanceTypes looks instance types up as planning and pricing need
// them: the market's live types (DescribeInstanceTypes) when it has them,
// else the embedded catalog.
type InstanceTypes struct {
	Embedded *catalog.Catalog
	Market   *catalog.Market // nil: the embedded catalog alone
}

// Live is the catalog to plan with.
func (t InstanceTypes) Live() *catalog.Catalog { return t.Market.Types(t.Embedded) }

// Get looks a type up in the live catalog, then in the embedded one: a
// node already running keeps its facts and price even when the live
// answer no longer lists its type.
func (t InstanceTypes) Get(name string) (*catalog.InstanceType, bool) {
	if it, ok := t.Live().Get(name); ok {
		return it, true
	}
	if t.Embedded == nil {
		return nil, false
	}
	return t.Embedded.Get(name)
}
