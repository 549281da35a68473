package ec2

import (
	"net/http"
	"time"
)

// Reclaim makes EC2 take an instance back after a delay, as a spot reclaim
// two minutes after the interruption warning or a host retirement does: at
// that moment a pending or running instance goes shutting-down (and
// terminated TerminateDelay later) and then, if given, is called on its own
// goroutine with the shutting-down snapshot (the local world turns it into
// an "EC2 Instance State-change Notification"). An instance already
// shutting down or terminated by then is left alone and then is not called.
// It returns when the reclaim is due. The timer is not persisted with the
// state: a world restarted in between does not reclaim.
func (s *Server) Reclaim(id string, after time.Duration, then func(Instance)) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok {
		return time.Time{}, newError(http.StatusBadRequest, CodeInvalidInstanceIDNotFound, "The instance ID '%s' does not exist", id)
	}
	if in.State != StatePending && in.State != StateRunning {
		return time.Time{}, newError(http.StatusBadRequest, "IncorrectInstanceState", "The instance '%s' is %s", id, in.State)
	}
	due := time.Now().Add(max(after, 0))
	time.AfterFunc(max(after, 0), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		in, ok := s.instances[id]
		if !ok || s.closed || (in.State != StatePending && in.State != StateRunning) {
			return
		}
		s.shutdownLocked(in)
		if then != nil {
			snap := in.snapshot()
			go then(snap)
		}
	})
	return due, nil
}
