package temporal

import "context"

// Restart stops the server and starts a new one with the same options: with
// a DBPath or Postgres the new server resumes every workflow from the store (the
// chaos run's "Temporal server restart"). Clients reconnect on their own.
func (s *Server) Restart(ctx context.Context) (*Server, error) {
	s.Stop()
	return Start(ctx, s.opts)
}
