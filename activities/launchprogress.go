package activities

import (
	"context"
	"maps"
	"slices"

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
	return launchProgress{Subnets: maps.Clone(l.Subnets), Templates: slices.Clone(l.Templates), Plan: l.Plan}
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

// forget drops everything: a template the plan named is gone, so the next
// attempt resolves all again.
func (l *progressLog) forget() {
	l.launchProgress = launchProgress{}
	l.save()
}
