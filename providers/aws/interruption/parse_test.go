package interruption

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The four sample events of ../shared/data/ec2-events (copied to testdata).
func TestParseSampleEvents(t *testing.T) {
	cases := []struct {
		file, kind, id, instance, action, state string
		time, notice                            time.Time
	}{
		{"spot-interruption-warning.json", KindSpotInterrupted, "11111111-2222-3333-4444-555555555501", "i-0123456789abcdef0", "terminate", "",
			utc("2026-08-20T10:05:00Z"), utc("2026-08-20T10:07:00Z")},
		{"rebalance-recommendation.json", KindRebalanceRecommendation, "11111111-2222-3333-4444-555555555502", "i-0123456789abcdef0", "", "",
			utc("2026-08-20T10:00:00Z"), time.Time{}},
		{"health-scheduled-change.json", KindScheduledChange, "11111111-2222-3333-4444-555555555503", "i-0123456789abcdef1", "", "",
			utc("2026-08-20T09:00:00Z"), utc("2026-09-03T02:00:00Z")},
		{"instance-state-change.json", KindInstanceTerminated, "11111111-2222-3333-4444-555555555504", "i-0123456789abcdef0", "", "shutting-down",
			utc("2026-08-20T10:07:00Z"), utc("2026-08-20T10:07:00Z")},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := Parse(mustRead(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != c.kind || m.EventID != c.id || m.Action != c.action || m.State != c.state {
				t.Errorf("got kind=%s id=%s action=%q state=%q", m.Kind, m.EventID, m.Action, m.State)
			}
			if len(m.InstanceIDs) != 1 || m.InstanceIDs[0] != c.instance {
				t.Errorf("instances %v, want [%s]", m.InstanceIDs, c.instance)
			}
			if !m.Time.Equal(c.time) || !m.NoticeEnd.Equal(c.notice) {
				t.Errorf("time %s notice end %s, want %s and %s", m.Time, m.NoticeEnd, c.time, c.notice)
			}
			if m.Account != "111122223333" || m.Region != "us-east-1" {
				t.Errorf("account %s region %s", m.Account, m.Region)
			}
		})
	}
	m, _ := Parse(mustRead(t, "health-scheduled-change.json"))
	if m.EventTypeCode != "AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED" {
		t.Errorf("event type code %q", m.EventTypeCode)
	}
}

func TestParseStates(t *testing.T) {
	for state, kind := range map[string]string{
		"stopping": KindInstanceStopped, "stopped": KindInstanceStopped,
		"shutting-down": KindInstanceTerminated, "terminated": KindInstanceTerminated,
		"running": KindNoOp, "pending": KindNoOp,
	} {
		body := `{"version":"0","id":"e1","detail-type":"EC2 Instance State-change Notification","source":"aws.ec2",
			"time":"2026-08-20T10:07:00Z","detail":{"instance-id":"i-0123456789abcdef0","state":"` + state + `"}}`
		m, err := Parse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if m.Kind != kind || m.State != state {
			t.Errorf("state %s: kind %s, want %s", state, m.Kind, kind)
		}
	}
}

// AWS's current Health docs put an instance ARN in entityValue; captured
// events put the bare id. Both are accepted; other entities are skipped.
func TestParseHealthAcceptsARNs(t *testing.T) {
	body := `{"version":"0","id":"h1","detail-type":"AWS Health Event","source":"aws.health","time":"2026-08-20T09:00:00Z",
		"detail":{"service":"EC2","eventTypeCategory":"scheduledChange","eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
		"startTime":"Thu, 03 Sep 2026 02:00:00 GMT",
		"affectedEntities":[{"entityValue":"arn:aws:ec2:us-east-1:111122223333:instance/i-0123456789abcdef1"},
			{"entityValue":"vol-0123456789abcdef0"},{"entityValue":"i-0123456789abcdef2"},
			{"entityValue":"arn:aws:ec2:us-east-1b:instance/i-0123456789abcdef3"}]}}`
	m, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"i-0123456789abcdef1", "i-0123456789abcdef2", "i-0123456789abcdef3"}
	if m.Kind != KindScheduledChange || len(m.InstanceIDs) != 3 || m.InstanceIDs[0] != want[0] || m.InstanceIDs[1] != want[1] || m.InstanceIDs[2] != want[2] {
		t.Fatalf("kind %s instances %v, want %v", m.Kind, m.InstanceIDs, want)
	}
	if !m.NoticeEnd.Equal(utc("2026-09-03T02:00:00Z")) {
		t.Errorf("notice end %s", m.NoticeEnd)
	}
}

func TestParseNoOpsAndUnknownKinds(t *testing.T) {
	cases := map[string]string{
		`{"version":"0","id":"h2","detail-type":"AWS Health Event","source":"aws.health","detail":{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"db-1"}]}}`:      KindNoOp,
		`{"version":"0","id":"h3","detail-type":"AWS Health Event","source":"aws.health","detail":{"service":"EC2","eventTypeCategory":"issue","affectedEntities":[{"entityValue":"i-0123456789abcdef0"}]}}`: KindNoOp,
		`{"version":"0","id":"u1","detail-type":"Capacity Block Reservation Expiration Warning","source":"aws.ec2","detail":{"capacity-reservation-id":"cr-0123456789abcdef0"}}`:                             KindUnknown,
		`{"version":"0","id":"u2","detail-type":"Object Created","source":"aws.s3","detail":{}}`:                                                                                                             KindUnknown,
	}
	for body, kind := range cases {
		m, err := Parse([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if m.Kind != kind || m.Why == "" || len(m.InstanceIDs) != 0 {
			t.Errorf("%s: kind %s why %q instances %v, want %s", body, m.Kind, m.Why, m.InstanceIDs, kind)
		}
	}
}

func TestParseRejectsMalformedMessages(t *testing.T) {
	for name, body := range map[string]string{
		"not json":              `hello`,
		"json array":            `[1,2]`,
		"sns envelope":          `{"Type":"Notification","MessageId":"m1","Message":"{}"}`,
		"no id":                 `{"version":"0","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{"instance-id":"i-0123456789abcdef0"}}`,
		"wrong version":         `{"version":"1","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{"instance-id":"i-0123456789abcdef0"}}`,
		"bad time":              `{"version":"0","id":"x","time":"yesterday","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{"instance-id":"i-0123456789abcdef0"}}`,
		"spot without detail":   `{"version":"0","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2"}`,
		"spot without instance": `{"version":"0","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{"instance-action":"terminate"}}`,
		"bad instance id":       `{"version":"0","id":"x","detail-type":"EC2 Instance Rebalance Recommendation","source":"aws.ec2","detail":{"instance-id":"i-xyz"}}`,
		"detail not an object":  `{"version":"0","id":"x","detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","detail":"stopping"}`,
		"health no instance":    `{"version":"0","id":"x","detail-type":"AWS Health Event","source":"aws.health","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"vol-1"}]}}`,
		"health bad start":      `{"version":"0","id":"x","detail-type":"AWS Health Event","source":"aws.health","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"soon","affectedEntities":[{"entityValue":"i-0123456789abcdef0"}]}}`,
	} {
		if m, err := Parse([]byte(body)); err == nil || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %+v, %v; want ErrMalformed", name, m, err)
		}
	}
}

func TestInstanceID(t *testing.T) {
	for in, want := range map[string]string{
		"i-0123456789abcdef0": "i-0123456789abcdef0",
		"i-01234567":          "i-01234567",
		"arn:aws:ec2:us-east-1:111122223333:instance/i-0123456789abcdef0": "i-0123456789abcdef0",
		"arn:aws:ec2:us-east-1b:instance/i-0123456789abcdef0":             "i-0123456789abcdef0",
		"arn:aws:ec2:us-east-1:111122223333:volume/vol-0123456789abcdef0": "",
		"i-0123456789ABCDEF0": "",
		"":                    "",
	} {
		got, ok := InstanceID(in)
		if got != want || ok != (want != "") {
			t.Errorf("InstanceID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// Every event the local world builds parses back to what was asked for.
func TestBuildRoundTrips(t *testing.T) {
	at := utc("2026-08-20T10:05:00Z")
	for _, c := range []struct {
		spec   Spec
		notice time.Time
	}{
		{Spec{Kind: KindSpotInterrupted, EventID: "s", InstanceID: "i-0123456789abcdef0", Time: at}, at.Add(2 * time.Minute)},
		{Spec{Kind: KindRebalanceRecommendation, EventID: "r", InstanceID: "i-0123456789abcdef0", Time: at}, time.Time{}},
		{Spec{Kind: KindScheduledChange, EventID: "h", InstanceID: "i-0123456789abcdef0", Time: at, StartTime: at.Add(time.Hour)}, at.Add(time.Hour)},
		{Spec{Kind: KindInstanceStopped, EventID: "st", InstanceID: "i-0123456789abcdef0", Time: at}, at},
		{Spec{Kind: KindInstanceTerminated, EventID: "t", InstanceID: "i-0123456789abcdef0", Time: at, State: "terminated"}, at},
	} {
		b, err := Build(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.spec.Kind, err, b)
		}
		if m.Kind != c.spec.Kind || m.EventID != c.spec.EventID || len(m.InstanceIDs) != 1 || m.InstanceIDs[0] != c.spec.InstanceID ||
			!m.Time.Equal(at) || !m.NoticeEnd.Equal(c.notice) {
			t.Errorf("%s: parsed back as %+v", c.spec.Kind, m)
		}
	}
	if _, err := Build(Spec{Kind: KindNoOp, InstanceID: "i-0123456789abcdef0"}); err == nil {
		t.Error("built a no-op event")
	}
}

// An interruptible reservation's warning is read as Karpenter reads it
// (capacity_reservation_interrupted), the instance going at its
// instance-termination-time; a message Build makes parses back.
func TestParseCapacityReservationInterruption(t *testing.T) {
	at := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	body, err := Build(Spec{Kind: KindCapacityReservationInterrupted, EventID: "e1", InstanceID: "i-0123456789abcdef0", Time: at})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindCapacityReservationInterrupted || m.DetailType != "EC2 Capacity Reservation Instance Interruption Warning" ||
		m.InstanceIDs[0] != "i-0123456789abcdef0" || m.Action != "terminate" || !m.NoticeEnd.Equal(at.Add(2*time.Minute)) {
		t.Errorf("parsed %+v", m)
	}
	raw := `{"version":"0","id":"e2","detail-type":"EC2 Capacity Reservation Instance Interruption Warning","source":"aws.ec2",` +
		`"time":"2026-12-06T15:00:00Z","detail":{"instance-id":"i-0123456789abcdef0","instance-action":"terminate","instance-termination-time":"2026-12-06T15:03:00Z","azId":"use1-az1"}}`
	if m, err := Parse([]byte(raw)); err != nil || !m.NoticeEnd.Equal(at.Add(3*time.Minute)) {
		t.Errorf("parsed %+v, %v", m, err)
	}
}
