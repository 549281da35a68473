package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestConsolidationScoresAndPodEventWrites(t *testing.T) {
	var none *Metrics
	none.ConsolidationScored("general-purpose", 0.4, false)
	none.PodEventWritten()

	m := New()
	m.ConsolidationScored("general-purpose", 0.03, false)
	m.ConsolidationScored("general-purpose", 5.6, true)
	m.ConsolidationScored("general-purpose", 0.42, false)
	m.PodEventWritten()
	if got := testutil.ToFloat64(m.ConsolidationMoves.WithLabelValues("general-purpose", "rejected")); got != 2 {
		t.Errorf("rejected moves %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.ConsolidationMoves.WithLabelValues("general-purpose", "approved")); got != 1 {
		t.Errorf("approved moves %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.PodEventWrites); got != 1 {
		t.Errorf("pod event writes %v, want 1", got)
	}
	if n, err := testutil.GatherAndCount(m.Registry, "joinery_consolidation_score"); err != nil || n != 2 {
		t.Errorf("score series %d, %v; want 2 (approved, rejected)", n, err)
	}
}
