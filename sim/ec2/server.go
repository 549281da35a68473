package ec2

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
	"github.com/joinery/joinery/sim/internal/throttle"
)

// Server is the local EC2 endpoint. Create it with New; it is safe for
// concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	opts Options

	mu        sync.Mutex
	rng       *rand.Rand
	vpcID     string
	subnets   []*subnet
	groups    []*securityGroup
	instances map[string]*instance
	seq       uint64 // launch sequence: DescribeInstances order and page tokens
	fleets    map[string]fleetRecord
	closed    bool

	templates    map[string]*LaunchTemplate // by id
	images       map[string]*Image          // by id
	customImages []string                   // AddImage ids, in order (state)
	releases     []Release
	ssm          map[string]ssmParam // public SSM parameters backed by images

	ice              map[pool]bool    // explicit insufficient capacity; "" fields are wildcards
	poolCap          map[pool]int     // SetPoolCapacity: at most n live instances; "" fields are wildcards
	quotas           map[quotaKey]int // SetVCPUQuota: vCPU quotas other than Options.VCPUQuota
	iceFraction      float64
	throttleFraction float64
	buckets          *throttle.Set // EC2's token buckets (nil: off)
	latency          time.Duration

	started   time.Time                 // the initial spot prices' timestamp
	spotMoves map[[2]string][]spotPoint // SetSpotPrice, by (type, zone), oldest first

	reservations map[string]*reservation // AddCapacityReservation, by id
	// placementGroups are CreatePlacementGroup's and AddPlacementGroup's, by id.
	placementGroups map[string]*placementGroup
	// reclaimHook is SetReclaimHook's.
	reclaimHook func(Instance)

	calls     map[string]int
	throttled map[string]int
	refused   map[string]string // Refuse: Action -> error code

	impaired map[string]time.Time // Impair: instance id -> failed since
}

// pool is one EC2 capacity pool: an instance type in a zone bought as a
// capacity type ("on-demand" or "spot").
type pool struct{ instanceType, zone, capacityType string }

// New returns a Server with one subnet per zone and one security group,
// tagged karpenter.sh/discovery=<ClusterTag>, and no instances.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		opts:             opts,
		rng:              rand.New(rand.NewPCG(opts.Seed, 0x6a6f696e657279)),
		instances:        map[string]*instance{},
		fleets:           map[string]fleetRecord{},
		ice:              map[pool]bool{},
		poolCap:          map[pool]int{},
		quotas:           map[quotaKey]int{},
		iceFraction:      opts.ICEFraction,
		throttleFraction: opts.ThrottleFraction,
		buckets:          throttle.NewSet(opts.ThrottleScale, nil),
		latency:          opts.Latency,
		calls:            map[string]int{},
		throttled:        map[string]int{},
		templates:        map[string]*LaunchTemplate{},
		ssm:              map[string]ssmParam{},
		started:          time.Now().UTC().Truncate(time.Second),
		spotMoves:        map[[2]string][]spotPoint{},
	}
	s.initNetwork()
	s.initImages()
	return s
}

// Options returns the options the server runs with, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Start serves s on addr (default "127.0.0.1:0", an ephemeral port; a bare
// ":port" binds 127.0.0.1) and returns its base URL, e.g.
// "http://127.0.0.1:41234", for the SDK's BaseEndpoint. stop shuts the
// listener down and calls Close.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ln, baseURL, err := serve.Listen("ec2", addr)
	if err != nil {
		return "", nil, err
	}
	shutdown := serve.Serve(ln, s)
	return baseURL, sync.OnceFunc(func() { shutdown(); s.Close() }), nil
}

// Close stops every pending state transition: no hook fires after it
// returns. Requests are still answered.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, in := range s.instances {
		if in.timer != nil {
			in.timer.Stop()
			in.timer = nil
		}
	}
}

// SetInsufficientCapacity makes the pool (instanceType, zone, capacityType)
// have no capacity (on) or restores it (off). An empty argument matches any
// value, e.g. ("m5.large", "", "spot") is spot m5.large in every zone.
func (s *Server) SetInsufficientCapacity(instanceType, zone, capacityType string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pool{instanceType, zone, capacityType}
	if on {
		s.ice[p] = true
	} else {
		delete(s.ice, p)
	}
}

// SetPoolCapacity lets the pools matching (instanceType, zone,
// capacityType) hold at most n instances together (n < 0: no limit
// again); an empty argument matches any value, so ("", "", "on-demand",
// 3) is three on-demand instances in the whole region. Instances count
// from launch until terminated (shutting-down ones still hold their
// capacity, as in EC2); a CreateFleet override past the limit fails with
// InsufficientInstanceCapacity, as EC2 answers when a pool runs out.
func (s *Server) SetPoolCapacity(instanceType, zone, capacityType string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pool{instanceType, zone, capacityType}
	if n < 0 {
		delete(s.poolCap, p)
	} else {
		s.poolCap[p] = n
	}
}

// poolFullLocked reports whether launching one more instance in p would
// pass a SetPoolCapacity limit.
func (s *Server) poolFullLocked(p pool) bool {
	for limit, n := range s.poolCap {
		if !limit.matches(p) {
			continue
		}
		used := 0
		for _, in := range s.instances {
			if in.State != StateTerminated && limit.matches(pool{in.InstanceType, in.Zone, in.CapacityType}) {
				used++
			}
		}
		if used >= n {
			return true
		}
	}
	return false
}

// matches reports whether pool q is one of the pools pattern p names
// ("" fields match any value).
func (p pool) matches(q pool) bool {
	return (p.instanceType == "" || p.instanceType == q.instanceType) && (p.zone == "" || p.zone == q.zone) &&
		(p.capacityType == "" || p.capacityType == q.capacityType)
}

// ClearInsufficientCapacity removes every SetInsufficientCapacity fault.
func (s *Server) ClearInsufficientCapacity() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.ice)
}

// SetICEFraction sets the probability, in [0, 1], that a pool tried by
// CreateFleet has no capacity for that request.
func (s *Server) SetICEFraction(f float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.iceFraction = f
}

// SetThrottleFraction sets the probability, in [0, 1], that a request is
// refused with RequestLimitExceeded (HTTP 503).
func (s *Server) SetThrottleFraction(f float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttleFraction = f
}

// SetLatency sets the delay added to every request.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Refuse makes every later request of the Action fail with the EC2 error
// code (UnauthorizedOperation: HTTP 403, as for a caller whose IAM policy
// lacks the action; another code: HTTP 400); an empty code lifts the
// refusal.
func (s *Server) Refuse(action, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]string{}
	}
	if code == "" {
		delete(s.refused, action)
		return
	}
	s.refused[action] = code
}

func refusalError(code string) *apiError {
	if code == CodeUnauthorizedOperation {
		return newError(http.StatusForbidden, code, "You are not authorized to perform this operation.")
	}
	return newError(http.StatusBadRequest, code, "The request was refused (%s).", code)
}

// Calls returns how many requests each Action received, throttled ones
// included.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyCounts(s.calls)
}

// ThrottledCalls returns how many requests of each Action were refused with
// RequestLimitExceeded (by a token bucket or the ThrottleFraction fault).
func (s *Server) ThrottledCalls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyCounts(s.throttled)
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// hasCapacityLocked reports whether pool p can launch an instance now:
// no SetInsufficientCapacity fault matches it and the ICE draw spares it.
func (s *Server) hasCapacityLocked(p pool) bool {
	for mask := 0; mask < 8; mask++ {
		q := p
		if mask&1 != 0 {
			q.instanceType = ""
		}
		if mask&2 != 0 {
			q.zone = ""
		}
		if mask&4 != 0 {
			q.capacityType = ""
		}
		if s.ice[q] {
			return false
		}
	}
	return !(s.iceFraction > 0 && s.rng.Float64() < s.iceFraction)
}

type handler func(s *Server, f form) (withRequestID, error)

var handlers = map[string]handler{
	"CreateFleet":                   (*Server).createFleet,
	"DescribeInstances":             (*Server).describeInstances,
	"DescribeInstanceStatus":        (*Server).describeInstanceStatus,
	"TerminateInstances":            (*Server).terminateInstances,
	"CreateTags":                    (*Server).createTags,
	"DescribeInstanceTypes":         (*Server).describeInstanceTypes,
	"DescribeInstanceTypeOfferings": (*Server).describeInstanceTypeOfferings,
	"DescribeSpotPriceHistory":      (*Server).describeSpotPriceHistory,
	"DescribeSubnets":               (*Server).describeSubnets,
	"DescribeSecurityGroups":        (*Server).describeSecurityGroups,
	"CreateLaunchTemplate":          (*Server).createLaunchTemplate,
	"DescribeLaunchTemplates":       (*Server).describeLaunchTemplates,
	"DeleteLaunchTemplate":          (*Server).deleteLaunchTemplate,
	"DescribeImages":                (*Server).describeImages,
	"DescribeInstanceAttribute":     (*Server).describeInstanceAttribute,
	"DescribeCapacityReservations":  (*Server).describeCapacityReservations,
	"CreatePlacementGroup":          (*Server).createPlacementGroup,
	"DescribePlacementGroups":       (*Server).describePlacementGroups,
	"DeletePlacementGroup":          (*Server).deletePlacementGroup,
}

// ServeHTTP answers one EC2 Query request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, "", invalidParameter("cannot parse request: %v", err))
		return
	}
	f := form(r.Form)
	action := f.get("Action")

	s.mu.Lock()
	requestID := s.uuidLocked()
	s.calls[action]++
	latency := s.latency
	throttle := s.throttleFraction > 0 && s.rng.Float64() < s.throttleFraction
	throttle = throttle || !s.withinLimits(action, f)
	if throttle {
		s.throttled[action]++
	}
	entry := s.recordLocked(r, action, f, throttle)
	s.mu.Unlock()
	aw := &answerWriter{ResponseWriter: w}
	defer s.noteAnswer(entry, aw)
	w = aw

	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if throttle {
		writeError(w, requestID, newError(http.StatusServiceUnavailable, CodeRequestLimitExceeded, "Request limit exceeded."))
		return
	}
	s.mu.Lock()
	refusal := s.refused[action]
	s.mu.Unlock()
	if refusal != "" {
		writeError(w, requestID, refusalError(refusal))
		return
	}
	if action == "" {
		writeError(w, requestID, newError(http.StatusBadRequest, "MissingAction", "The request must contain the parameter Action"))
		return
	}
	switch v := f.get("Version"); v {
	case APIVersion:
	case "":
		writeError(w, requestID, missingParameter("Version"))
		return
	default:
		writeError(w, requestID, newError(http.StatusBadRequest, "NoSuchVersion",
			"The requested version (%s) of service AmazonEC2 does not exist", v))
		return
	}
	h, ok := handlers[action]
	if !ok {
		writeError(w, requestID, newError(http.StatusBadRequest, "InvalidAction",
			"The action %s is not valid for this web service.", action))
		return
	}
	if aerr := s.authorize(caller, action, f); aerr != nil {
		writeError(w, requestID, aerr)
		return
	}
	if aerr := filterLimit(f); aerr != nil {
		writeError(w, requestID, aerr)
		return
	}
	if f.get("DryRun") == "true" {
		writeError(w, requestID, newError(http.StatusPreconditionFailed, "DryRunOperation",
			"Request would have succeeded, but DryRun flag is set."))
		return
	}
	var body withRequestID
	var err error
	if action == "CreateFleet" {
		body, err = s.createFleetAs(caller, f) // its launches are authorized per override
	} else {
		body, err = h(s, f)
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = newError(http.StatusInternalServerError, "InternalError", "%v", err)
		}
		writeError(w, requestID, ae)
		return
	}
	writeResponse(w, action, requestID, body)
}

// uuidLocked returns a random UUID-formatted string (request ids, fleet ids).
func (s *Server) uuidLocked() string {
	a, b := s.rng.Uint64(), s.rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		a>>32, (a>>16)&0xffff, a&0xfff, 0x8000|(b>>48)&0x3fff, b&0xffffffffffff)
}

// resourceIDLocked returns an EC2-style id: prefix + "-0" + 16 hex digits.
func (s *Server) resourceIDLocked(prefix string) string {
	return fmt.Sprintf("%s-0%016x", prefix, s.rng.Uint64())
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
