// Package interruption parses the EC2 interruption events that EventBridge
// delivers to the interruption SQS queue (the body of each message is the
// EventBridge event itself, no SNS envelope), as Karpenter's interruption
// controller does: spot interruption warnings, rebalance recommendations,
// AWS Health scheduled changes for EC2 and instance state changes.
//
// Parse takes no decision: it says what happened to which instances and
// when they are expected to go away. The Interruption workflow decides.
package interruption

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/joinery/joinery/api/saga"
)

// Kinds, used as the kind label of joinery_interruption_received_messages_total
// (the first five are Karpenter's names). Those the Interruption workflow
// acts on are its own constants: what Parse says is what it switches on.
const (
	KindSpotInterrupted         = saga.KindSpotInterrupted
	KindRebalanceRecommendation = saga.KindRebalanceRecommendation
	KindScheduledChange         = saga.KindScheduledChange
	KindInstanceStopped         = saga.KindInstanceStopped
	KindInstanceTerminated      = saga.KindInstanceTerminated
	// KindCapacityReservationInterrupted is an interruptible capacity
	// reservation's instance being reclaimed.
	KindCapacityReservationInterrupted = saga.KindCapacityReservationInterrupted
	// KindNoOp is a known event that asks for nothing: a Health event for
	// another service or category, a state change to pending or running.
	KindNoOp = "no_op"
	// KindUnknown is an event of a source and detail-type Joinery does not know.
	KindUnknown = "unknown"
	// KindUnparsable labels messages Parse rejected (not JSON, no envelope,
	// a known kind without a usable instance id).
	KindUnparsable = "unparsable"
)

// SpotNotice is how long before the reclaim EC2 sends a spot interruption
// warning: the instance goes away two minutes after the event's time.
const SpotNotice = 2 * time.Minute

// Event sources and detail types (EventBridge rules of Karpenter's
// getting-started CloudFormation template).
const (
	SourceEC2    = "aws.ec2"
	SourceHealth = "aws.health"

	DetailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	DetailRebalance        = "EC2 Instance Rebalance Recommendation"
	DetailHealth           = "AWS Health Event"
	DetailStateChange      = "EC2 Instance State-change Notification"
	// DetailReservationInterruption: an interruptible capacity
	// reservation's owner reclaims the instance in two minutes
	// (detail instance-id, instance-action, instance-termination-time).
	DetailReservationInterruption = "EC2 Capacity Reservation Instance Interruption Warning"
)

// Message is one parsed interruption event.
type Message struct {
	Kind       string
	EventID    string // the EventBridge event id (unique per event)
	Source     string
	DetailType string
	Account    string
	Region     string
	Time       time.Time // when the event was emitted
	// InstanceIDs are the instances concerned (one for EC2 events, the
	// affected entities of a Health event).
	InstanceIDs []string
	// Action is the spot instance-action (terminate, stop or hibernate).
	Action string
	// State is the new instance state of a state change.
	State string
	// EventTypeCode is the Health event type, e.g.
	// AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED.
	EventTypeCode string
	// NoticeEnd is when the instance is expected to go away: Time + 2 min
	// for a spot warning, the Health event's startTime for a scheduled
	// change, Time for a state change (it is already going); zero for a
	// rebalance recommendation and no-ops.
	NoticeEnd time.Time
	// Why says why a KindNoOp or KindUnknown message asks for nothing.
	Why string
}

// envelope is the EventBridge event (Karpenter's messages.Metadata).
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

type ec2Detail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
	State          string `json:"state"`
	// TerminationTime is a reservation interruption's
	// instance-termination-time (RFC 3339).
	TerminationTime string `json:"instance-termination-time"`
}

type healthDetail struct {
	EventArn          string `json:"eventArn"`
	Service           string `json:"service"`
	EventTypeCode     string `json:"eventTypeCode"`
	EventTypeCategory string `json:"eventTypeCategory"`
	StartTime         string `json:"startTime"`
	AffectedEntities  []struct {
		EntityValue string `json:"entityValue"`
	} `json:"affectedEntities"`
}

// ErrMalformed wraps every parse failure.
var ErrMalformed = errors.New("malformed interruption message")

func malformed(format string, args ...interface{}) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)

// InstanceID returns the instance id in s, which is either a bare id
// (i-0123456789abcdef0) or an instance ARN
// (arn:aws:ec2:us-east-1:111122223333:instance/i-0123456789abcdef0, also the
// older AZ-style arn:aws:ec2:us-east-1b:instance/i-...).
func InstanceID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "arn:") {
		i := strings.LastIndex(s, ":instance/")
		if i < 0 {
			return "", false
		}
		s = s[i+len(":instance/"):]
	}
	if !instanceIDPattern.MatchString(s) {
		return "", false
	}
	return s, true
}

// Parse parses one SQS message body. A message of an unknown source or
// detail-type, or one that asks for nothing, is returned with KindUnknown
// or KindNoOp and no error; an error (wrapping ErrMalformed) means the body
// cannot be understood.
func Parse(body []byte) (Message, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Message{}, malformed("not an EventBridge event: %v", err)
	}
	if env.ID == "" || env.Source == "" || env.DetailType == "" {
		return Message{}, malformed("envelope lacks id, source or detail-type")
	}
	if env.Version != "0" {
		return Message{}, malformed("envelope version %q, want \"0\"", env.Version)
	}
	m := Message{EventID: env.ID, Source: env.Source, DetailType: env.DetailType, Account: env.Account, Region: env.Region}
	if env.Time != "" {
		t, err := time.Parse(time.RFC3339, env.Time)
		if err != nil {
			return Message{}, malformed("time %q is not RFC 3339", env.Time)
		}
		m.Time = t
	}
	switch {
	case env.Source == SourceEC2 && env.DetailType == DetailSpotInterruption:
		d, err := ec2InstanceDetail(env)
		if err != nil {
			return Message{}, err
		}
		m.Kind, m.InstanceIDs, m.Action = KindSpotInterrupted, []string{d.InstanceID}, d.InstanceAction
		if !m.Time.IsZero() {
			m.NoticeEnd = m.Time.Add(SpotNotice)
		}
	case env.Source == SourceEC2 && env.DetailType == DetailReservationInterruption:
		return reservationInterruption(env, m)
	case env.Source == SourceEC2 && env.DetailType == DetailRebalance:
		d, err := ec2InstanceDetail(env)
		if err != nil {
			return Message{}, err
		}
		m.Kind, m.InstanceIDs = KindRebalanceRecommendation, []string{d.InstanceID}
	case env.Source == SourceEC2 && env.DetailType == DetailStateChange:
		d, err := ec2InstanceDetail(env)
		if err != nil {
			return Message{}, err
		}
		m.InstanceIDs, m.State = []string{d.InstanceID}, d.State
		switch d.State {
		case "stopping", "stopped":
			m.Kind = KindInstanceStopped
		case "shutting-down", "terminated":
			m.Kind = KindInstanceTerminated
		default:
			m.Kind, m.Why = KindNoOp, "instance state "+d.State+" needs no action"
			return m, nil
		}
		m.NoticeEnd = m.Time
	case env.Source == SourceHealth && env.DetailType == DetailHealth:
		return parseHealth(env, m)
	default:
		m.Kind, m.Why = KindUnknown, fmt.Sprintf("unknown event %s / %q", env.Source, env.DetailType)
	}
	return m, nil
}

// reservationInterruption reads an interruptible reservation's warning:
// the instance goes at its instance-termination-time, else two minutes
// after the event (AWS sends it two minutes ahead).
func reservationInterruption(env envelope, m Message) (Message, error) {
	d, err := ec2InstanceDetail(env)
	if err != nil {
		return Message{}, err
	}
	m.Kind, m.InstanceIDs, m.Action = KindCapacityReservationInterrupted, []string{d.InstanceID}, d.InstanceAction
	if d.TerminationTime != "" {
		t, err := time.Parse(time.RFC3339, d.TerminationTime)
		if err != nil {
			return Message{}, malformed("instance-termination-time %q is not RFC 3339", d.TerminationTime)
		}
		m.NoticeEnd = t
	} else if !m.Time.IsZero() {
		m.NoticeEnd = m.Time.Add(SpotNotice)
	}
	return m, nil
}

func ec2InstanceDetail(env envelope) (ec2Detail, error) {
	var d ec2Detail
	if len(env.Detail) == 0 {
		return d, malformed("%s event %s has no detail", env.DetailType, env.ID)
	}
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		return d, malformed("%s detail: %v", env.DetailType, err)
	}
	id, ok := InstanceID(d.InstanceID)
	if !ok {
		return d, malformed("%s event %s: instance-id %q is not an instance id", env.DetailType, env.ID, d.InstanceID)
	}
	d.InstanceID = id
	return d, nil
}

// healthTimeLayouts: Health events write RFC 1123 times ("Thu, 03 Sep 2026
// 02:00:00 GMT"); RFC 3339 is accepted too.
var healthTimeLayouts = []string{time.RFC1123, time.RFC1123Z, time.RFC3339}

func parseHealth(env envelope, m Message) (Message, error) {
	var d healthDetail
	if len(env.Detail) == 0 {
		return Message{}, malformed("Health event %s has no detail", env.ID)
	}
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		return Message{}, malformed("Health detail: %v", err)
	}
	m.EventTypeCode = d.EventTypeCode
	if d.Service != "EC2" || d.EventTypeCategory != "scheduledChange" {
		m.Kind, m.Why = KindNoOp, fmt.Sprintf("Health event for service %q, category %q", d.Service, d.EventTypeCategory)
		return m, nil
	}
	for _, e := range d.AffectedEntities {
		if id, ok := InstanceID(e.EntityValue); ok {
			m.InstanceIDs = append(m.InstanceIDs, id)
		}
	}
	if len(m.InstanceIDs) == 0 {
		return Message{}, malformed("Health event %s names no instance in affectedEntities", env.ID)
	}
	if d.StartTime != "" {
		for _, layout := range healthTimeLayouts {
			if t, err := time.Parse(layout, d.StartTime); err == nil {
				m.NoticeEnd = t.UTC()
				break
			}
		}
		if m.NoticeEnd.IsZero() {
			return Message{}, malformed("Health event %s: startTime %q", env.ID, d.StartTime)
		}
	}
	m.Kind = KindScheduledChange
	return m, nil
}
