package v1

import (
	"strings"
	"testing"
)

func TestCostLimitParses(t *testing.T) {
	for v, want := range map[string]float64{"250": 250, "0.25": 0.25, "0": 0, "007.50": 7.5} {
		np := validPool()
		np.Annotations = map[string]string{AnnotationLimitUSDPerHour: v}
		got, ok := np.CostLimit()
		if !ok || got != want {
			t.Errorf("%q: got %v %v, want %v", v, got, ok, want)
		}
		if errs := np.Validate(); len(errs) != 0 {
			t.Errorf("%q rejected: %v", v, errs)
		}
	}
	if _, ok := validPool().CostLimit(); ok {
		t.Error("a pool without the annotation has a cost limit")
	}
}

func TestCostLimitInvalidIsRejectedWithFieldAndReason(t *testing.T) {
	const path = "metadata.annotations[joinery.sh/limit-usd-per-hour]"
	for _, v := range []string{"-1", "$250", "250 USD", "1e3", "Inf", "NaN", "", ".5", "0x10", "2,5"} {
		np := validPool()
		np.Annotations = map[string]string{AnnotationLimitUSDPerHour: v}
		if _, ok := np.CostLimit(); ok {
			t.Errorf("%q parsed as a limit", v)
		}
		err := np.Validate().ToAggregate()
		want := path + `: Invalid value: "` + v + `": must be a non-negative decimal number of USD per hour`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", v, err, want)
		}
	}
	np := validPool()
	r := int64(2)
	np.Spec.Replicas, np.Spec.Weight = &r, nil
	np.Annotations = map[string]string{AnnotationLimitUSDPerHour: "10"}
	if err := np.Validate().ToAggregate(); err == nil || !strings.Contains(err.Error(), path+": Forbidden: a USD/hour limit is not supported on static NodePools") {
		t.Errorf("static pool with a USD limit: got %v", err)
	}
}
