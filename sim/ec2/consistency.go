package ec2

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"time"
)

// EC2's API is eventually consistent: what a call creates may be unknown to
// the next one for a while, and AWS publishes no bound. With
// Options.Consistency set, the endpoint answers that way: a launched
// instance is unknown to DescribeInstances, TerminateInstances, CreateTags
// and DescribeInstanceAttribute (InvalidInstanceID.NotFound by id, absent
// from a filtered listing) until its visibility time; a launch template
// created over the API is unknown to DescribeLaunchTemplates, CreateFleet
// and DeleteLaunchTemplate (InvalidLaunchTemplateName.NotFoundException /
// InvalidLaunchTemplateId.NotFound); a tag CreateTags writes on an
// instance does not match a tag filter (the old value does) until its own
// visibility time. Each resource's delay is drawn in [Consistency/2,
// Consistency], hashed from Options.Seed and the resource's id, so runs
// vary by seed but repeat. The instance itself boots and runs at once
// (Instances, Instance and the lifecycle hooks see it): only the API lags.

// now is the clock launch times and the consistency window are read by.
func (s *Server) now() time.Time { return s.opts.Now() }

// lag is how long the resource with the given id stays invisible to the
// API after it is written (0 with the window off).
func (s *Server) lag(id string) time.Duration {
	c := s.opts.Consistency
	if c <= 0 {
		return 0
	}
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], s.opts.Seed)
	sum := sha256.Sum256(append(seed[:], id...))
	half := c / 2
	return half + time.Duration(binary.BigEndian.Uint64(sum[:8])%uint64(c-half+1))
}

// visibleAfter is when a resource written now becomes visible to the API
// (zero: at once).
func (s *Server) visibleAfter(id string) time.Time {
	d := s.lag(id)
	if d == 0 {
		return time.Time{}
	}
	return s.now().Add(d)
}

// visible reports whether a resource whose visibility time is at has
// become visible to the API.
func (s *Server) visible(at time.Time) bool { return at.IsZero() || !s.now().Before(at) }

// tagWrite is a CreateTags write filters do not see yet: until at, the key
// matches as it was before (had: it existed, with value old).
type tagWrite struct {
	at  time.Time
	old string
	had bool
}

// writeTagsLocked writes tags on an instance, each key visible to tag
// filters after its own lag.
func (s *Server) writeTagsLocked(in *instance, tags map[string]string) {
	for k, v := range tags {
		at := s.visibleAfter(in.ID + "/tag:" + k + "=" + v)
		if !at.IsZero() {
			if in.tagWrites == nil {
				in.tagWrites = map[string]tagWrite{}
			}
			w, pending := in.tagWrites[k]
			if !pending || s.visible(w.at) {
				old, had := in.Tags[k]
				w = tagWrite{old: old, had: had}
			}
			w.at = at
			in.tagWrites[k] = w
		}
		in.Tags[k] = v
	}
}

// filterTagsLocked are an instance's tags as tag filters see them: writes
// still in their window show the value before them.
func (s *Server) filterTagsLocked(in *instance) map[string]string {
	if len(in.tagWrites) == 0 {
		return in.Tags
	}
	out := maps.Clone(in.Tags)
	for k, w := range in.tagWrites {
		switch {
		case s.visible(w.at):
			delete(in.tagWrites, k)
		case w.had:
			out[k] = w.old
		default:
			delete(out, k)
		}
	}
	return out
}

// visibleInstancesLocked drops the instances the API does not show yet.
func (s *Server) visibleInstancesLocked(items []*instance) []*instance {
	out := items[:0:0]
	for _, in := range items {
		if s.visible(in.visibleAt) {
			out = append(out, in)
		}
	}
	return out
}

// visibleTemplatesLocked drops the templates the API does not show yet.
func (s *Server) visibleTemplatesLocked(items []*LaunchTemplate) []*LaunchTemplate {
	out := items[:0:0]
	for _, lt := range items {
		if s.visible(lt.visibleAt) {
			out = append(out, lt)
		}
	}
	return out
}

// Visible reports whether the API shows the instance yet (false for an
// unknown id): tests use it to act within the window.
// VisibleAt is when the API starts to show the instance (zero: at once;
// false: no such instance).
func (s *Server) VisibleAt(id string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok {
		return time.Time{}, false
	}
	return in.visibleAt, true
}

func (s *Server) Visible(id string) bool {
	at, ok := s.VisibleAt(id)
	return ok && s.visible(at)
}
