package world

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/sqs"
)

// InterruptionQueueName is the local interruption queue (the one
// EventBridge would feed in an AWS account).
const InterruptionQueueName = "joinery-interruption"

// DefaultNotice is how long EC2 gives a spot instance after its warning.
const DefaultNotice = interruption.SpotNotice

// Simulated kinds (starter simulate interruption --kind).
const (
	SimSpot       = "spot"
	SimHealth     = "health"
	SimStopped    = "stopped"
	SimTerminated = "terminated"
	SimRebalance  = "rebalance"
	// SimReservation: the owner of the interruptible capacity reservation
	// the instance runs in takes it back (the reservation shrinks by one).
	SimReservation = "reservation"
)

// SimulateRequest asks the local world to interrupt one instance.
type SimulateRequest struct {
	Node       string `json:"node,omitempty"`       // the Node's name, or
	InstanceID string `json:"instanceId,omitempty"` // the instance id
	Kind       string `json:"kind,omitempty"`       // spot (default), health, stopped, terminated, rebalance
	// Notice is how long until EC2 reclaims the instance (default 2m;
	// shortened for tests). For spot the warning's time is set Notice - 2m
	// in the past, so "time + 2 minutes" is the reclaim, as on EC2.
	Notice time.Duration `json:"notice,omitempty"`
}

// SimulateResult says what was sent and when the reclaim is due.
type SimulateResult struct {
	Node       string    `json:"node,omitempty"`
	InstanceID string    `json:"instanceId"`
	Kind       string    `json:"kind"`
	EventID    string    `json:"eventId"`
	MessageID  string    `json:"messageId"`
	SentAt     time.Time `json:"sentAt"`
	ReclaimAt  time.Time `json:"reclaimAt,omitempty"` // zero: no reclaim (rebalance)
	Body       string    `json:"body,omitempty"`      // the message sent
}

// interruptions is the world's SQS endpoint and admin server.
type interruptions struct {
	stopSQS, stopAdmin func()
}

// startInterruptions serves the SQS endpoint with the interruption queue
// and, when o.AdminAddr is set, the loopback admin endpoint.
func (w *World) startInterruptions(o Options) error {
	w.SQS = sqs.New(sqs.Options{Region: o.Region, Account: AccountID, Guard: w.Auth, ThrottleScale: o.throttleScale(),
		DuplicateFraction: o.queueDuplicates(), Reorder: !o.QueueInOrder})
	var err error
	w.SQSEndpoint, w.interruptions.stopSQS, err = w.SQS.Start(o.SQSAddr)
	if err != nil {
		return fmt.Errorf("sqs endpoint: %w", err)
	}
	w.InterruptionQueueURL = w.SQS.CreateQueue(InterruptionQueueName, 0)
	if o.AdminAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", o.AdminAddr)
	if err != nil {
		return fmt.Errorf("admin endpoint %s: %w (pass another --admin-addr)", o.AdminAddr, err)
	}
	w.AdminAddr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/simulate/interruption", serveSimulation("notice", func(r *SimulateRequest, d time.Duration) { r.Notice = d }, w.SimulateInterruption))
	mux.HandleFunc("/simulate/node-fault", serveSimulation("grace", func(r *NodeFaultRequest, d time.Duration) { r.Grace = d }, w.SimulateNodeFault))
	mux.HandleFunc("/endpoints", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(w.Endpoints())
	})
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte("ok")) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	w.interruptions.stopAdmin = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}
	return nil
}

func (w *World) stopInterruptions() {
	if w.interruptions.stopAdmin != nil {
		w.interruptions.stopAdmin()
	}
	if w.interruptions.stopSQS != nil {
		w.interruptions.stopSQS()
	}
}

// SimulateInterruption sends the interruption event of req.Kind for an
// instance to the interruption queue, as EventBridge would, and (except for
// a rebalance recommendation) makes the EC2 endpoint reclaim the instance
// after req.Notice; the reclaim sends an "EC2 Instance State-change
// Notification" (shutting-down) too. Kind terminated reclaims at once.
func (w *World) SimulateInterruption(ctx context.Context, req SimulateRequest) (SimulateResult, error) {
	if req.Kind == "" {
		req.Kind = SimSpot
	}
	if req.Notice <= 0 {
		req.Notice = DefaultNotice
	}
	if req.Kind == SimTerminated {
		req.Notice = 0
	}
	res := SimulateResult{Node: req.Node, InstanceID: req.InstanceID, Kind: req.Kind}
	if res.InstanceID == "" {
		if req.Node == "" {
			return res, errors.New("name a node or an instance")
		}
		_, n, err := w.nodeNamed(ctx, req.Node)
		if err != nil {
			return res, err
		}
		res.InstanceID = instanceOf(n)
	}
	in, ok := w.EC2.Instance(res.InstanceID)
	if !ok {
		return res, fmt.Errorf("instance %s is not one of the local EC2 endpoint's", res.InstanceID)
	}
	if in.State != ec2.StateRunning && in.State != ec2.StatePending {
		return res, fmt.Errorf("instance %s is %s", res.InstanceID, in.State)
	}
	now := time.Now().UTC().Truncate(time.Second)
	spec := interruption.Spec{InstanceID: res.InstanceID, EventID: newEventID(), Time: now}
	switch req.Kind {
	case SimSpot:
		spec.Kind = interruption.KindSpotInterrupted
		spec.Time = now.Add(req.Notice - interruption.SpotNotice)
	case SimHealth:
		spec.Kind, spec.StartTime = interruption.KindScheduledChange, now.Add(req.Notice)
	case SimStopped:
		spec.Kind, spec.State = interruption.KindInstanceStopped, "stopping"
	case SimRebalance:
		spec.Kind = interruption.KindRebalanceRecommendation
	case SimReservation:
		if in.Lifecycle != ec2.LifecycleInterruptible {
			return res, fmt.Errorf("instance %s is not in an interruptible capacity reservation", res.InstanceID)
		}
		spec.Kind, spec.StartTime = interruption.KindCapacityReservationInterrupted, now.Add(req.Notice)
	case SimTerminated:
	default:
		return res, fmt.Errorf("unknown kind %q (spot, health, stopped, terminated, rebalance, reservation)", req.Kind)
	}
	res.EventID = spec.EventID
	if spec.Kind != "" {
		body, err := interruption.Build(spec)
		if err != nil {
			return res, err
		}
		res.Body = string(body)
		if res.MessageID, err = w.SQS.Send(InterruptionQueueName, res.Body); err != nil {
			return res, err
		}
		res.SentAt = time.Now()
	}
	if req.Kind == SimRebalance {
		return res, nil
	}
	reclaim := w.EC2.Reclaim
	if req.Kind == SimReservation {
		reclaim = w.EC2.ReclaimInterruptible
	}
	due, err := reclaim(res.InstanceID, req.Notice, w.sendStateChange)
	if err != nil {
		return res, err
	}
	res.ReclaimAt = due
	if spec.Kind == "" { // terminated: the reclaim's state change is the event
		res.SentAt = due
	}
	return res, nil
}

// sendStateChange is the reclaim hook: EventBridge's state-change event.
func (w *World) sendStateChange(in ec2.Instance) {
	if w.SQS == nil {
		return
	}
	body, err := interruption.Build(interruption.Spec{Kind: interruption.KindInstanceTerminated, State: in.State,
		InstanceID: in.ID, EventID: newEventID(), Time: time.Now().UTC()})
	if err == nil {
		_, _ = w.SQS.Send(InterruptionQueueName, string(body))
	}
}

func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Endpoints are the world's region and AWS endpoints, as the admin
// endpoint's /endpoints answers them (starter catalog export reads them).
type Endpoints struct {
	Region  string `json:"region"`
	EC2     string `json:"ec2"`
	Pricing string `json:"pricing"`
	// AdminKey is the key tools sign their calls with (allowed everything).
	AdminAccessKeyID     string `json:"adminAccessKeyId"`
	AdminSecretAccessKey string `json:"adminSecretAccessKey"`
}

// Endpoints returns the world's region, AWS endpoints and admin key.
func (w *World) Endpoints() Endpoints {
	k := w.AdminKey()
	return Endpoints{Region: w.Region, EC2: w.EC2Endpoint, Pricing: w.PricingEndpoint, AdminAccessKeyID: k.AccessKeyID, AdminSecretAccessKey: k.SecretAccessKey}
}
