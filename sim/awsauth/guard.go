package awsauth

import (
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/internal/reqlog"
)

// Guard authenticates and authorizes one local world's AWS calls. Create
// it with NewGuard; it is safe for concurrent use. A nil *Guard serves
// every request through Caller and Admit (endpoints without one: unit
// tests); its other methods need one.
type Guard struct {
	mu    sync.Mutex
	byKey map[string]*Identity
	now   func() time.Time
	log   reqlog.Log[Call]
}

// NewGuard returns a Guard that knows the identities.
func NewGuard(ids ...Identity) *Guard {
	g := &Guard{byKey: map[string]*Identity{}, now: time.Now}
	for _, id := range ids {
		g.Add(id)
	}
	return g
}

// Add registers (or replaces) an identity by its access key.
func (g *Guard) Add(id Identity) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cp := id
	cp.Policies = append([]*policy.Policy(nil), id.Policies...)
	g.byKey[id.AccessKeyID] = &cp
}

// SetPolicies replaces the policies of the identity with the access key
// (tests: a policy minus one statement).
func (g *Guard) SetPolicies(accessKeyID string, ps ...*policy.Policy) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if id, ok := g.byKey[accessKeyID]; ok {
		cp := *id
		cp.Policies = append([]*policy.Policy(nil), ps...)
		g.byKey[accessKeyID] = &cp
	}
}

func (g *Guard) identity(key string) (*Identity, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.byKey[key]
	return id, ok
}

// Caller is an authenticated request's principal and the region its
// signature is scoped to (aws:RequestedRegion).
type Caller struct {
	Identity *Identity
	Region   string
}

// Check is one authorization question of a call: Action on Resource (an
// ARN, "*" for actions without resource-level permissions) with the
// call's condition keys for that resource.
type Check struct {
	Action   string
	Resource string
	Context  policy.Context
}

// Result is a check with its decision.
type Result struct {
	Check
	policy.Decision
}

// Call is one authorized (or refused) call, as recorded.
type Call struct {
	Time      time.Time
	Service   string // signing name: "ec2"
	Operation string // "CreateFleet"
	Principal string // Identity.Name
	Results   []Result
}

// Clone copies the call's slices and maps.
func (c Call) Clone() Call {
	c.Results = append([]Result(nil), c.Results...)
	for i := range c.Results {
		c.Results[i].Context = maps.Clone(c.Results[i].Context)
	}
	return c
}

// Authorize evaluates every check of the operation for the caller, with
// the global condition keys added (aws:PrincipalArn, aws:PrincipalAccount,
// aws:RequestedRegion unless the check sets it, aws:SecureTransport,
// aws:CurrentTime, aws:EpochTime). It returns the first check refused,
// as a *Failure, or nil when all are allowed; the call is recorded when
// recording is on.
func (g *Guard) Authorize(c *Caller, service, operation string, checks []Check) *Failure {
	now := g.now().UTC()
	call := Call{Time: now, Service: service, Operation: operation, Principal: c.Identity.Name}
	var first *Failure
	for _, ch := range checks {
		ch.Context = g.globalKeys(c, ch.Context, now)
		d := policy.Evaluate(c.Identity.Policies, policy.Request(ch))
		call.Results = append(call.Results, Result{Check: ch, Decision: d})
		if !d.Allowed && first == nil {
			first = &Failure{Kind: Denied, Principal: c.Identity.ARN, PrincipalName: c.Identity.Name, Check: ch, Decision: d}
			first.Message = first.deniedMessage()
		}
	}
	g.log.Add(func() Call { return call.Clone() })
	return first
}

func (g *Guard) globalKeys(c *Caller, in policy.Context, now time.Time) policy.Context {
	ctx := maps.Clone(in)
	if ctx == nil {
		ctx = policy.Context{}
	}
	principal := c.Identity.RoleARN
	if principal == "" {
		principal = c.Identity.ARN
	}
	set := func(k, v string) {
		if _, ok := ctx[k]; !ok && v != "" {
			ctx[k] = []string{v}
		}
	}
	set("aws:PrincipalArn", principal)
	set("aws:PrincipalAccount", c.Identity.Account)
	set("aws:RequestedRegion", c.Region)
	// What AWS sees of the worker's requests: TLS (the SDK speaks HTTPS
	// to AWS; only the local world's loopback is plain HTTP).
	set("aws:SecureTransport", "true")
	set("aws:CurrentTime", now.Format(time.RFC3339))
	set("aws:EpochTime", strconv.FormatInt(now.Unix(), 10))
	return ctx
}

// SetRecording turns the call log on or off (off by default).
func (g *Guard) SetRecording(on bool) { g.log.SetRecording(on) }

// Calls returns the calls recorded so far, in order.
func (g *Guard) Calls() []Call { return g.log.Snapshot(Call.Clone) }

// ResetCalls forgets the recorded calls.
func (g *Guard) ResetCalls() { g.log.Reset() }
