package ec2

// FleetErrorCounts counts the per-pool errors (errorCode, e.g.
// InsufficientInstanceCapacity) of the CreateFleet answers kept for
// idempotency (requests with a ClientToken): how many capacity faults the
// callers saw.
func (s *Server) FleetErrorCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, f := range s.fleets {
		for _, e := range f.resp.Errors {
			out[e.ErrorCode]++
		}
	}
	return out
}
