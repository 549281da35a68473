package activities

import (
	"context"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
)

// launchProgress is what a LaunchInstance attempt leaves in its heartbeat
// for the next one (a retry after its worker died): the subnets it chose,
// the launch templates EC2 has, and, once all exist, the plan. Each step is
// carried as soon as it is done, so attempts that keep losing their worker
// still advance; the plan alone lets a retry skip the instance lookup
// (its CreateFleet repeats the client token).
type launchProgress struct {
	Subnets   map[string]string `json:",omitempty"` // zone -> subnet id
	Templates []string          `json:",omitempty"` // names EC2 has
	Plan      *launchPlan       `json:",omitempty"`
	// Spent counts this call's CreateFleet answers that launched nothing:
	// EC2 keeps an answer for its client token, so the next try needs a
	// new token (fleetToken).
	Spent int `json:",omitempty"`
	// Unseen is when this call first looked for an instance an earlier
	// attempt may have launched and EC2 showed none (zero: not yet).
	Unseen time.Time `json:",omitempty"`
	// Calling is set while a CreateFleet of this call awaits its answer:
	// a retry that finds it set follows an attempt that died mid-call.
	Calling bool `json:",omitempty"`
	// Unanswered is set when this call's last CreateFleet got no answer
	// from EC2 (a timeout, a broken connection): it may have launched.
	Unanswered bool `json:",omitempty"`
}

// progressLog is this attempt's launchProgress and the heartbeat that
// carries it.
type progressLog struct {
	launchProgress
	beat *pulse
}

// resumeLaunch starts the attempt's heartbeat from the progress the
// previous attempt carried (none on a first attempt).
func resumeLaunch(ctx context.Context) *progressLog {
	var p launchProgress
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &p); err != nil {
			p = launchProgress{}
		}
	}
	if p.Plan != nil && len(p.Plan.Configs) == 0 {
		p.Plan = nil
	}
	l := &progressLog{launchProgress: p}
	l.beat = startPulse(ctx, l.snapshot())
	return l
}

// snapshot copies the progress, so a heartbeat the SDK encodes later never
// reads what this attempt is still changing.
func (l *progressLog) snapshot() launchProgress {
	return launchProgress{Subnets: maps.Clone(l.Subnets), Templates: slices.Clone(l.Templates), Plan: l.Plan,
		Spent: l.Spent, Unseen: l.Unseen, Calling: l.Calling, Unanswered: l.Unanswered}
}

func (l *progressLog) save() { l.beat.carry(l.snapshot()) }

func (l *progressLog) chose(subnets map[string]string) {
	l.Subnets = subnets
	l.save()
}

func (l *progressLog) hasTemplate(name string) bool { return slices.Contains(l.Templates, name) }

func (l *progressLog) madeTemplate(name string) {
	if !l.hasTemplate(name) {
		l.Templates = append(l.Templates, name)
		l.save()
	}
}

func (l *progressLog) planned(lp launchPlan) {
	l.Plan = &lp
	l.save()
}

// forget drops the subnets, templates and plan: a template the plan named
// is gone, so the next attempt resolves all again (with the client token
// it would have had).
func (l *progressLog) forget() {
	l.launchProgress = launchProgress{Spent: l.Spent, Unseen: l.Unseen, Calling: l.Calling, Unanswered: l.Unanswered}
	l.save()
}

// calling records that a CreateFleet is sent.
func (l *progressLog) calling() {
	l.Calling = true
	l.save()
}

// returned records that a CreateFleet returned, answered by EC2 or not
// (aws.Answered).
func (l *progressLog) returned(answered bool) {
	l.Calling, l.Unanswered = false, !answered
	l.save()
}

// mayHaveLaunched says whether an earlier CreateFleet of this call may
// have launched an instance whose answer this attempt does not have: it
// died during the call, or the answer was lost.
func (l *progressLog) mayHaveLaunched() bool { return l.Calling || l.Unanswered }

// spend records a CreateFleet answer that launched nothing: the next
// CreateFleet takes a new client token.
func (l *progressLog) spend() {
	l.Spent++
	l.Unseen = time.Time{}
	l.save()
}

// unseenFor is how much longer to wait for EC2 to show an instance an
// earlier attempt may have launched, looking now and having found none:
// the rest of the consistency window since the first such look (0: the
// window has passed, there is none).
func (l *progressLog) unseenFor(now time.Time, window time.Duration) time.Duration {
	if l.Unseen.IsZero() {
		l.Unseen = now
		l.save()
	}
	return max(l.Unseen.Add(window).Sub(now), 0)
}
