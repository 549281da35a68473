package ec2

import (
	"fmt"
	"time"
)

// Impair makes the instance's status check fail from since on, as when
// EC2 finds its instance unreachable: DescribeInstanceStatus answers its
// instance status impaired, detail reachability failed with ImpairedSince.
func (s *Server) Impair(id string, since time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok || in.State == StateTerminated {
		return fmt.Errorf("instance %s is not a live instance of the local EC2 endpoint", id)
	}
	if s.impaired == nil {
		s.impaired = map[string]time.Time{}
	}
	s.impaired[id] = since.UTC()
	return nil
}

// Instance status summaries and details (DescribeInstanceStatus).
const (
	statusOK            = "ok"
	statusImpaired      = "impaired"
	statusNotApplicable = "not-applicable"
	detailPassed        = "passed"
	detailFailed        = "failed"
)

type describeInstanceStatusResponse struct {
	meta
	Statuses  []instanceStatusXML `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

type instanceStatusXML struct {
	InstanceID       string           `xml:"instanceId"`
	AvailabilityZone string           `xml:"availabilityZone"`
	InstanceState    stateXML         `xml:"instanceState"`
	SystemStatus     statusSummaryXML `xml:"systemStatus"`
	InstanceStatus   statusSummaryXML `xml:"instanceStatus"`
}

type statusSummaryXML struct {
	Status  string            `xml:"status"`
	Details []statusDetailXML `xml:"details>item,omitempty"`
}

type statusDetailXML struct {
	Name          string `xml:"name"`
	Status        string `xml:"status"`
	ImpairedSince string `xml:"impairedSince,omitempty"`
}

// statusesOfLocked are the instance's system and instance status
// summaries. Only a running instance is checked; the others are
// not-applicable, as EC2 answers with IncludeAllInstances.
func (s *Server) statusesOfLocked(in *instance) (system, inst statusSummaryXML) {
	if in.State != StateRunning {
		na := statusSummaryXML{Status: statusNotApplicable}
		return na, na
	}
	ok := statusSummaryXML{Status: statusOK, Details: []statusDetailXML{{Name: "reachability", Status: detailPassed}}}
	inst = ok
	if since, bad := s.impaired[in.ID]; bad {
		inst = statusSummaryXML{Status: statusImpaired, Details: []statusDetailXML{{Name: "reachability", Status: detailFailed,
			ImpairedSince: since.Format("2006-01-02T15:04:05.000Z")}}}
	}
	return ok, inst
}

// describeInstanceStatus answers DescribeInstanceStatus as EC2 does: running
// instances only unless IncludeAllInstances, InstanceId or MaxResults
// (5-1000, not both), EC2's filters, pages by launch order. No instance
// here has a scheduled event, so event.code matches nothing.
func (s *Server) describeInstanceStatus(f form) (withRequestID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items, max, err := s.requestedInstancesLocked(f)
	if err != nil {
		return nil, err
	}
	if f.get("IncludeAllInstances") != "true" {
		var running []*instance
		for _, in := range items {
			if in.State == StateRunning {
				running = append(running, in)
			}
		}
		items = running
	}
	items, err = applyFilters(items, f.filters(), s.statusFields(), nil)
	if err != nil {
		return nil, err
	}
	items, next, err := page(items, func(in *instance) uint64 { return in.seq }, "instancestatus", f.get("NextToken"), max, 1000, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeInstanceStatusResponse{NextToken: next}
	for _, in := range items {
		sys, inst := s.statusesOfLocked(in)
		out.Statuses = append(out.Statuses, instanceStatusXML{InstanceID: in.ID, AvailabilityZone: in.Zone, InstanceState: state(in.State),
			SystemStatus: sys, InstanceStatus: inst})
	}
	return out, nil
}

// statusFields are DescribeInstanceStatus's filters.
func (s *Server) statusFields() fields[*instance] {
	summary := func(system bool, detail bool) func(*instance) []string {
		return func(in *instance) []string {
			sys, inst := s.statusesOfLocked(in)
			st := inst
			if system {
				st = sys
			}
			if !detail {
				return []string{st.Status}
			}
			var out []string
			for _, d := range st.Details {
				out = append(out, d.Status)
			}
			return out
		}
	}
	return fields[*instance]{
		"instance-id":                  instanceFields["instance-id"],
		"availability-zone":            instanceFields["availability-zone"],
		"instance-state-name":          instanceFields["instance-state-name"],
		"instance-state-code":          instanceFields["instance-state-code"],
		"instance-status.status":       summary(false, false),
		"instance-status.reachability": summary(false, true),
		"system-status.status":         summary(true, false),
		"system-status.reachability":   summary(true, true),
		"event.code":                   func(*instance) []string { return nil },
		"event.description":            func(*instance) []string { return nil },
		"event.instance-event-id":      func(*instance) []string { return nil },
		"event.not-after":              func(*instance) []string { return nil },
		"event.not-before":             func(*instance) []string { return nil },
	}
}
