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
	return s.reclaimAfterLocked(id, after, then), nil
}

// reclaimAfterLocked schedules the reclaim of instance id after a delay
// (Reclaim) and returns when it is due.
func (s *Server) reclaimAfterLocked(id string, after time.Duration, then func(Instance)) time.Time {
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
	return due
}

// SetReclaimHook sets what EC2's own reclaims (a capacity block's end)
// call with the instance going away: the local world sends its
// "EC2 Instance State-change Notification".
func (s *Server) SetReclaimHook(then func(Instance)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reclaimHook = then
}

// ReclaimInterruptible is an interruptible reservation's owner taking one
// instance back: the reservation shrinks by one (so the slot is not
// launched into again) and the instance is reclaimed after notice
// (Reclaim). The instance must run in an interruptible reservation.
func (s *Server) ReclaimInterruptible(id string, notice time.Duration, then func(Instance)) (time.Time, error) {
	s.mu.Lock()
	in, ok := s.instances[id]
	var r *reservation
	if ok {
		r = s.reservations[in.CapacityReservationID]
	}
	if r == nil || !r.Interruptible {
		s.mu.Unlock()
		return time.Time{}, newError(http.StatusBadRequest, CodeInvalidParameterValue, "The instance '%s' is not in an interruptible capacity reservation", id)
	}
	r.TotalInstanceCount = max(r.TotalInstanceCount-1, 0)
	s.mu.Unlock()
	return s.Reclaim(id, notice, then)
}

// scheduleBlockEndLocked has EC2 terminate an instance launched into a
// capacity block CapacityBlockReclaim before the block's end.
func (s *Server) scheduleBlockEndLocked(in *instance) {
	r := s.reservations[in.CapacityReservationID]
	if r == nil || r.ReservationType != ReservationTypeCapacityBlock {
		return
	}
	s.reclaimAfterLocked(in.ID, time.Until(r.EndDate.Add(-CapacityBlockReclaim)), func(snap Instance) {
		s.mu.Lock()
		hook := s.reclaimHook
		s.mu.Unlock()
		if hook != nil {
			hook(snap)
		}
	})
}
