package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// Fleet batching: launches that ask for the same thing (launch templates,
// overrides, capacity type, NodePool and tags: all but the NodeClaim)
// within a short window go to EC2 as one CreateFleet whose target
// capacity is their number, as Karpenter's CreateFleet batcher does. EC2
// counts every CreateFleet against its mutating-call bucket (50, then 5 a
// second): a burst of hundreds of NodeClaims launched one call each waits
// a minute for that bucket alone.
const (
	DefaultLaunchBatchIdle = 100 * time.Millisecond
	fleetBatchMaxWait      = time.Second
	// maxFleetBatch bounds one call's target capacity (and its tagging).
	maxFleetBatch = 100
	// fleetTagTimeout bounds the tagging of one batch's instances
	// (CreateTags has a bucket of its own: 100, then 10 a second).
	fleetTagTimeout = 2 * time.Minute
	fleetTagWorkers = 8
)

// fleetBatcher gathers concurrent launches by what they ask for.
type fleetBatcher struct {
	c     *Client
	idle  time.Duration
	mu    sync.Mutex
	byKey map[string]*batcher[Instance]
	// pending holds each request by its key and NodeClaim until its batch
	// runs; byKey drops a key's batcher when a batch runs, so keys of
	// offerings no longer asked for are not kept.
	pending map[string]LaunchRequest
	// launched keeps each batch's instances by NodeClaim for launchedTTL:
	// a caller that gave up while its batch ran (its attempt timed out)
	// finds its instance when retried (FromBatch), rather than waiting out
	// EC2's consistency window for it to show.
	launched map[string]launchedInstance
}

// launchedTTL bounds how long a batch's answer waits for a retry.
const launchedTTL = 10 * time.Minute

type launchedInstance struct {
	key, token string // the request's fleetKey and client token
	inst       Instance
	at         time.Time
}

func newFleetBatcher(c *Client, idle time.Duration) *fleetBatcher {
	return &fleetBatcher{c: c, idle: idle, byKey: map[string]*batcher[Instance]{}, pending: map[string]LaunchRequest{},
		launched: map[string]launchedInstance{}}
}

// launch is req's instance, from the batch it joins. A launch already
// waiting for the same NodeClaim (a retry) shares its answer.
func (f *fleetBatcher) launch(ctx context.Context, req LaunchRequest) (Instance, error) {
	members := memberCap(f.c.sharedTags(req))
	if batchMemberTag(req.NodeClaim) == "" || members < 2 {
		return f.c.launchOne(ctx, req)
	}
	key := fleetKey(req)
	f.mu.Lock()
	// The same request under the same client token: EC2 would give the
	// same answer.
	if l, ok := f.keptLocked(req.NodeClaim); ok && l.key == key && req.ClientToken != "" && l.token == req.ClientToken {
		f.mu.Unlock()
		return l.inst, nil
	}
	b := f.byKey[key]
	if b == nil {
		b = &batcher[Instance]{idle: f.idle, maxWait: max(fleetBatchMaxWait, f.idle), maxIDs: members, timeout: batchTimeout + fleetTagTimeout,
			run: func(ctx context.Context, names []string) map[string]outcome[Instance] { return f.run(ctx, key, names) }}
		f.byKey[key] = b
	}
	if _, waiting := f.pending[pendingKey(key, req.NodeClaim)]; !waiting {
		f.pending[pendingKey(key, req.NodeClaim)] = req
	}
	f.mu.Unlock()
	return b.do(ctx, req.NodeClaim)
}

// run launches one batch: a lone request as it would launch unbatched
// (tagged with its NodeClaim, under its own client token), several with
// one CreateFleet.
func (f *fleetBatcher) run(ctx context.Context, key string, names []string) map[string]outcome[Instance] {
	f.mu.Lock()
	delete(f.byKey, key) // a launch from now on starts a new batcher
	var reqs []LaunchRequest
	for _, n := range names {
		// A request already taken by another batch of its key (a retry
		// that joined a newer batcher) is answered by that batch alone.
		if r, ok := f.pending[pendingKey(key, n)]; ok {
			reqs = append(reqs, r)
			delete(f.pending, pendingKey(key, n))
		}
	}
	f.mu.Unlock()
	var out map[string]outcome[Instance]
	switch len(reqs) {
	case 0:
		return nil // each caller gets errNoAnswer and its attempt is retried
	case 1:
		inst, err := f.c.launchOne(ctx, reqs[0])
		out = map[string]outcome[Instance]{reqs[0].NodeClaim: {inst, err}}
	default:
		out = f.c.launchMany(ctx, reqs)
	}
	f.keep(key, reqs, out)
	return out
}

// keep records a batch's instances for launchedTTL.
func (f *fleetBatcher) keep(key string, reqs []LaunchRequest, out map[string]outcome[Instance]) {
	now := f.c.Clock().Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, l := range f.launched {
		if now.Sub(l.at) > launchedTTL {
			delete(f.launched, k)
		}
	}
	for _, r := range reqs {
		if o, ok := out[r.NodeClaim]; ok && o.err == nil {
			f.launched[r.NodeClaim] = launchedInstance{key: key, token: r.ClientToken, inst: o.val, at: now}
		}
	}
}

// launchMany launches one instance per request with one CreateFleet (the
// requests differ only in their NodeClaim), each instance tagged with
// every request's member tag, gives them out by pairBatch and tags each
// with its NodeClaim before answering. A request left without an instance
// (EC2 launched fewer) gets the call's errors.
func (c *Client) launchMany(ctx context.Context, reqs []LaunchRequest) map[string]outcome[Instance] {
	first := reqs[0]
	configs, zoneOf, _ := fleetConfigs(first)
	shared := c.sharedTags(first)
	token := batchToken(reqs)
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.NodeClaim
		shared[batchMemberTag(r.NodeClaim)] = token
	}
	in := fleetInput(first, configs, shared, len(reqs))
	in.ClientToken = aws.String(token)
	out := make(map[string]outcome[Instance], len(reqs))
	resp, err := c.ec2.CreateFleet(ctx, in)
	if err != nil {
		for _, r := range reqs {
			out[r.NodeClaim] = outcome[Instance]{err: fmt.Errorf("CreateFleet: %w", err)}
		}
		return out
	}
	fleetErrs, unfulfillable := fleetErrors(resp.Errors, first.CapacityType, zoneOf)
	unfulfillable = scopeToGroup(first, fleetErrs, unfulfillable)
	c.opts.ICECache.MarkAll(unreserved(unfulfillable))
	c.opts.ICECache.MarkAll(quotaMarks(fleetErrs))
	paired := pairBatch(names, launched(resp.Instances, first.CapacityType, shared, zoneOf))
	for _, r := range reqs {
		inst, ok := paired[r.NodeClaim]
		if !ok {
			out[r.NodeClaim] = outcome[Instance]{err: noInstance(fleetErrs, unfulfillable)}
			continue
		}
		inst.Tags = maps.Clone(shared)
		inst.Tags[apiv1.TagNodeClaim], inst.Tags[apiv1.TagName] = r.NodeClaim, r.NodeClaim
		out[r.NodeClaim] = outcome[Instance]{val: withReservation(r, inst)}
	}
	c.tagLaunched(ctx, out)
	return out
}

// sharedTags are the tags every instance of req's CreateFleet carries: all
// but its NodeClaim's.
func (c *Client) sharedTags(req LaunchRequest) map[string]string {
	tags := c.instanceTags(req)
	delete(tags, apiv1.TagNodeClaim)
	delete(tags, apiv1.TagName)
	return tags
}

// tagLaunched tags each launched instance with its NodeClaim (and Name).
// An instance whose tags could not be written is still answered, its
// Tags without them: the NodeClaim records its instance id, which is
// what Joinery matches it by once launched, and its member tag finds it
// before that.
func (c *Client) tagLaunched(ctx context.Context, out map[string]outcome[Instance]) {
	ctx, cancel := context.WithTimeout(ctx, fleetTagTimeout)
	defer cancel()
	work := make(chan string)
	untagged := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range fleetTagWorkers {
		wg.Go(func() {
			for name := range work {
				if err := c.Claim(ctx, out[name].val.ID, name); err != nil {
					mu.Lock()
					untagged[name] = true
					mu.Unlock()
				}
			}
		})
	}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if out[name].err == nil {
			work <- name
		}
	}
	close(work)
	wg.Wait()
	for name := range untagged {
		o := out[name]
		o.val.Tags = maps.Clone(o.val.Tags)
		delete(o.val.Tags, apiv1.TagNodeClaim)
		delete(o.val.Tags, apiv1.TagName)
		out[name] = o
	}
}

// kept is the instance a batch of this process launched for nodeClaim
// within launchedTTL.
func (f *fleetBatcher) kept(nodeClaim string) (Instance, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.keptLocked(nodeClaim)
	return l.inst, ok
}

// keptLocked is the batch answer kept for nodeClaim, unless older than
// launchedTTL (f.mu held).
func (f *fleetBatcher) keptLocked(nodeClaim string) (launchedInstance, bool) {
	l, ok := f.launched[nodeClaim]
	if !ok || f.c.Clock().Now().Sub(l.at) > launchedTTL {
		return launchedInstance{}, false
	}
	return l, true
}

func pendingKey(key, nodeClaim string) string { return key + "/" + nodeClaim }

// fleetKey is what a launch asks EC2 for, its NodeClaim and client token
// aside: launches with the same key can share one CreateFleet.
func fleetKey(req LaunchRequest) string {
	req.NodeClaim, req.ClientToken = "", ""
	tags := slices.Sorted(maps.Keys(req.Tags))
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%t|%s|%v|%v|%v|%s|%v|%v|%s|%s|%t", req.CapacityType, req.NodePool, req.Prioritized,
		req.LaunchTemplateVersion, req.configs(), tags, tagValues(req.Tags, tags), req.LaunchTemplateName, req.InstanceTypes, req.ImageIDs, req.Context,
		req.ReservationType, req.Interruptible))
	return hex.EncodeToString(sum[:16])
}

func tagValues(tags map[string]string, keys []string) []string {
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = tags[k]
	}
	return vals
}

// batchToken is the client token of one batched CreateFleet: its
// requests' own tokens (or NodeClaims), so the SDK's retries of the call
// are idempotent and no other batch shares it.
func batchToken(reqs []LaunchRequest) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.NodeClaim + "/" + r.ClientToken
	}
	slices.Sort(parts)
	sum := sha256.Sum256(fmt.Appendf(nil, "%v", parts))
	return hex.EncodeToString(sum[:16])
}
