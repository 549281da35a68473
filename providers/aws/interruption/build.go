package interruption

import (
	"encoding/json"
	"fmt"
	"time"
)

// Spec describes an event to build, in the shape EventBridge delivers it
// (used by the local world to fire interruptions).
type Spec struct {
	Kind       string // one of the Kind* constants except no-op/unknown
	EventID    string
	InstanceID string
	Account    string // default 111122223333
	Region     string // default us-east-1
	Time       time.Time
	// State for KindInstanceStopped (stopping, stopped) and
	// KindInstanceTerminated (shutting-down, terminated); defaults stopping
	// and shutting-down.
	State string
	// StartTime of a scheduled change, or a reservation interruption's
	// instance-termination-time (default Time + 2 min).
	StartTime time.Time
}

// healthTimeFormat is how Health events write times (RFC 1123 in GMT).
const healthTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// Build returns the JSON body of the event.
func Build(s Spec) ([]byte, error) {
	if s.Account == "" {
		s.Account = "111122223333"
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	if _, ok := InstanceID(s.InstanceID); !ok {
		return nil, fmt.Errorf("interruption: %q is not an instance id", s.InstanceID)
	}
	arn := fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", s.Region, s.Account, s.InstanceID)
	env := map[string]interface{}{
		"version": "0", "id": s.EventID, "account": s.Account, "region": s.Region,
		"time": s.Time.UTC().Format(time.RFC3339), "resources": []string{arn},
	}
	switch s.Kind {
	case KindSpotInterrupted:
		env["source"], env["detail-type"] = SourceEC2, DetailSpotInterruption
		env["detail"] = map[string]string{"instance-id": s.InstanceID, "instance-action": "terminate"}
	case KindCapacityReservationInterrupted:
		env["source"], env["detail-type"] = SourceEC2, DetailReservationInterruption
		end := s.StartTime
		if end.IsZero() {
			end = s.Time.Add(SpotNotice)
		}
		env["detail"] = map[string]string{"instance-id": s.InstanceID, "instance-action": "terminate",
			"instance-termination-time": end.UTC().Format(time.RFC3339)}
	case KindRebalanceRecommendation:
		env["source"], env["detail-type"] = SourceEC2, DetailRebalance
		env["detail"] = map[string]string{"instance-id": s.InstanceID}
	case KindInstanceStopped, KindInstanceTerminated:
		if s.State == "" {
			s.State = map[string]string{KindInstanceStopped: "stopping", KindInstanceTerminated: "shutting-down"}[s.Kind]
		}
		env["source"], env["detail-type"] = SourceEC2, DetailStateChange
		env["detail"] = map[string]string{"instance-id": s.InstanceID, "state": s.State}
	case KindScheduledChange:
		start := s.StartTime
		if start.IsZero() {
			start = s.Time.Add(SpotNotice)
		}
		code := "AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED"
		env["source"], env["detail-type"] = SourceHealth, DetailHealth
		env["resources"] = []string{s.InstanceID}
		env["detail"] = map[string]interface{}{
			"eventArn":          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", s.Region, code, code, s.EventID),
			"service":           "EC2",
			"eventTypeCode":     code,
			"eventTypeCategory": "scheduledChange",
			"startTime":         start.UTC().Format(healthTimeFormat),
			"statusCode":        "upcoming",
			"eventRegion":       s.Region,
			"eventDescription":  []map[string]string{{"language": "en_US", "latestDescription": "Simulated by the Joinery local world: scheduled maintenance of the instance's host."}},
			"affectedEntities":  []map[string]string{{"entityValue": s.InstanceID, "status": "PENDING"}},
		}
	default:
		return nil, fmt.Errorf("interruption: cannot build an event of kind %q", s.Kind)
	}
	return json.Marshal(env)
}
