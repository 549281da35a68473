package iam

import (
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// IAM is eventually consistent with EC2: a new instance profile, or a role
// just added to one, is refused by EC2 for a while (AWS publishes no bound;
// seconds to a couple of minutes are seen). With Options.Propagation set
// the local EC2 endpoint sees each change only after its delay. A removed
// role is gone for EC2 at once (AWS may take up to an hour, which would
// only be kinder).

// reachesEC2 is when a change made now, named key, reaches EC2.
func (s *Server) reachesEC2(key string) time.Time {
	p := s.opts.Propagation
	if p <= 0 {
		return time.Time{}
	}
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], s.opts.Seed)
	sum := sha256.Sum256(append(seed[:], key...))
	half := p / 2
	return s.now().Add(half + time.Duration(binary.BigEndian.Uint64(sum[:8])%uint64(p-half+1)))
}

// InstanceProfileARN reports whether EC2 knows the instance profile yet
// (its creation has propagated), and its ARN. The local EC2 endpoint asks
// it when CreateFleet names a profile.
func (s *Server) InstanceProfileARN(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.profiles[name]
	if !ok || s.now().Before(p.ec2Sees) {
		return "", false
	}
	return s.profileARN(p), true
}

// InstanceProfileHasRole reports whether EC2 sees a role on the instance
// profile (one was added, and that has propagated).
func (s *Server) InstanceProfileHasRole(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.profiles[name]
	return ok && len(p.roles) > 0 && !s.now().Before(p.roleReaches)
}
