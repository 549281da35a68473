package catalog

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// WriteCSV writes every fact of every type, and the market's zones and
// spot prices; Parse reads the same catalog back (what `starter catalog
// export` writes, `starter plan --catalog` reads).
func TestExportRoundTrip(t *testing.T) {
	emb := MustDefault()
	zones := map[string][]string{"c7a.large": {"eu-west-1b", "eu-west-1a"}, "m5.large": {"eu-west-1a", "eu-west-1b", "eu-west-1c"}}
	spot := map[string]map[string]float64{"c7a.large": {"eu-west-1a": 0.0312, "eu-west-1b": 0.0287}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, emb.WithMarket(zones, spot)); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Types) != len(emb.Types) {
		t.Fatalf("%d types back, want %d", len(back.Types), len(emb.Types))
	}
	for i, it := range back.Types {
		if !reflect.DeepEqual(it, emb.Types[i]) {
			t.Errorf("%s:\n got %+v\nwant %+v", it.Name, *it, *emb.Types[i])
		}
	}
	if got := back.Zones(); !slices.Equal(got, []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}) {
		t.Errorf("zones %v", got)
	}
	m := back.Market()
	c7a, _ := back.Get("c7a.large")
	var got []string
	for _, o := range m.Offerings(c7a, back.Zones()) {
		got = append(got, o.Zone+"/"+o.CapacityType+"/"+formatFloat(o.Price))
	}
	want := []string{"eu-west-1a/on-demand/0.10264", "eu-west-1b/on-demand/0.10264", "eu-west-1a/spot/0.0312", "eu-west-1b/spot/0.0287"}
	if !slices.Equal(got, want) {
		t.Errorf("c7a.large offerings %v, want %v", got, want)
	}
	if MustDefault().Market() != nil {
		t.Error("the embedded catalog has market data")
	}
	if p := m.Price(c7a, "eu-west-1b", apiv1.CapacityTypeSpot); p != 0.0287 {
		t.Errorf("spot price %v", p)
	}
}

// A bad spot_usd_per_hour cell is refused with the type and the cell.
func TestExportParseRefusesBadSpot(t *testing.T) {
	csv := "instance_type,vcpu,memory_mib,ondemand_usd_per_hour,spot_usd_per_hour\nm5.large,2,8192,0.096,eu-west-1a:0.03\n"
	_, err := Parse([]byte(csv), nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(`m5.large spot_usd_per_hour "eu-west-1a:0.03"`)) {
		t.Errorf("err = %v", err)
	}
}

func formatFloat(f float64) string { return string(appendFloat(nil, f)) }
