package metrics

import "github.com/prometheus/client_golang/prometheus"

func newCloudThrottled(r *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "joinery_cloud_throttled_requests_total",
		Help: "AWS API attempts refused for their rate (RequestLimitExceeded, Throttling, ThrottlingException, RequestThrottled), retried ones included, by service and action."},
		[]string{"service", "action"})
	r.MustRegister(c)
	return c
}

// CloudThrottled counts one AWS attempt refused for its rate (for
// cloud.Options.Throttled).
func (m *Metrics) CloudThrottled(service, action string) {
	if m == nil {
		return
	}
	m.CloudThrottledRequests.WithLabelValues(service, action).Inc()
}
