package capacity

import (
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPricesNode(t *testing.T) {
	cat := catalog.MustDefault()
	m5, _ := cat.Get("m5.large")
	var market *catalog.Market
	p := NewPrices(cat.Get, func() *catalog.Market { return market }, func(string) *apiv1.NodePool { return nil })
	node := func(typ, ct string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			apiv1.LabelInstanceType: typ, apiv1.LabelZone: "us-east-1a", apiv1.LabelCapacityType: ct, apiv1.LabelNodePool: "gp"}}}
	}
	cases := []struct {
		name string
		node *corev1.Node
		want float64
	}{
		{"on-demand list price", node("m5.large", "on-demand"), market.Price(m5, "us-east-1a", "on-demand")},
		{"unknown type", node("x9.huge", "on-demand"), 0},
	}
	for _, c := range cases {
		if got := p.Node(c.node); got != c.want {
			t.Errorf("%s: Node = %v, want %v", c.name, got, c.want)
		}
		if got := p.List(c.node); got != c.want {
			t.Errorf("%s: List = %v, want %v (no overlays)", c.name, got, c.want)
		}
	}
	if p.Node(node("m5.large", "on-demand")) == 0 {
		t.Error("m5.large priced 0")
	}
}
