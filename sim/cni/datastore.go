package cni

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// nodeState is ipamd's datastore on one node.
type nodeState struct {
	instance string
	limits   Limits
	enis     int
	held     []string             // secondary addresses (ENI primaries included) beyond the instance's own
	pinned   int                  // held[:pinned] are the launch's prefixes' addresses, kept for the node's life
	assigned map[types.UID]string // pod -> address
	cooling  map[string]time.Time // freed address -> reusable at
	backoff  time.Time            // no EC2 call before this, after the subnet ran dry
	warned   map[types.UID]time.Time
}

// reconcile brings the node's pool and pod addresses up to date; it
// returns when to look again (0: on the next change).
func (c *CNI) reconcile(ctx context.Context, name string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	node, err := c.nodes.Get(name)
	if err != nil {
		delete(c.state, name) // the instance's addresses went back with it
		return 0
	}
	st := c.nodeState(node)
	if st == nil {
		return 0
	}
	now := time.Now()
	pods := c.podsOn(name)
	st.release(pods, now, c.o.Settings.IPCooldown)
	pending := st.adopt(pods)
	for {
		c.grow(st, now)
		n := len(pending)
		pending = c.assign(ctx, st, pending)
		if len(pending) == n || len(pending) == 0 {
			break
		}
	}
	c.shrink(st)
	c.warn(ctx, node, st, pending, now)
	return st.nextLook(now, len(pending) > 0)
}

// nodeState is the node's datastore, made when ipamd starts on it from
// what EC2 says the instance holds; nil for a node of no local instance.
func (c *CNI) nodeState(node *corev1.Node) *nodeState {
	id := instanceID(node.Spec.ProviderID)
	if st := c.state[node.Name]; st != nil && st.instance == id {
		return st
	}
	typ, held, ok := c.o.Cloud.Instance(id)
	if !ok {
		return nil
	}
	l, ok := c.o.Limits(typ)
	if !ok {
		return nil
	}
	l.ENIs = max(l.ENIs-noAddressInterfaces(c.o.Cloud, id), 0)
	st := &nodeState{instance: id, limits: l, held: held, assigned: map[types.UID]string{},
		cooling: map[string]time.Time{}, warned: map[types.UID]time.Time{}}
	c.launchPrefixes(st)
	st.enis = max(1, c.eniCount(st, 1+len(st.held)))
	c.state[node.Name] = st
	return st
}

// launchPrefixes deals with the /28 prefixes the instance was launched
// with (spec.ipPrefixCount) as ipamd does when it starts: with prefix
// delegation it takes them into the pool (on the primary ENI, ahead of
// what it assigns); without, it gives the unused prefixes back to the
// subnet (amazon-vpc-cni-k8s ipamd nodeInit: tryUnassignPrefixesFromENIs).
// Real ipamd may later free a pre-delegated prefix beyond
// WARM_PREFIX_TARGET; here the node keeps them, holding more of the
// subnet, not less.
func (c *CNI) launchPrefixes(st *nodeState) {
	prefixes := c.o.Cloud.Prefixes(st.instance)
	if len(prefixes) == 0 {
		return
	}
	if !c.o.Settings.PrefixDelegation {
		c.o.Cloud.UnassignPrefixes(st.instance, prefixes)
		return
	}
	var addrs []string
	for _, p := range prefixes {
		addrs = append(addrs, prefixAddresses(p)...)
	}
	st.held, st.pinned = append(addrs, st.held...), len(addrs)
}

// prefixAddresses are the addresses of an IPv4 prefix ("10.0.64.16/28").
func prefixAddresses(prefix string) []string {
	ip, n, err := net.ParseCIDR(prefix)
	if err != nil || ip.To4() == nil {
		return nil
	}
	ones, bits := n.Mask.Size()
	base := binary.BigEndian.Uint32(n.IP.To4())
	out := make([]string, 0, 1<<(bits-ones))
	for i := uint32(0); i < 1<<(bits-ones); i++ {
		a := make(net.IP, 4)
		binary.BigEndian.PutUint32(a, base+i)
		out = append(out, a.String())
	}
	return out
}

// eniCount is how many ENIs a pool of addresses addresses spans.
func (c *CNI) eniCount(st *nodeState, addresses int) int {
	return ceilDiv(addresses, c.perENI(st))
}

// perENI is the addresses one full ENI takes: its primary and its
// secondaries, or its prefixes.
func (c *CNI) perENI(st *nodeState) int {
	if c.o.Settings.PrefixDelegation {
		return 1 + (st.limits.IPv4PerENI-1)*prefixSize
	}
	return st.limits.IPv4PerENI
}

// release takes back the addresses of pods gone or finished: they cool
// down before reuse.
func (st *nodeState) release(pods map[types.UID]*corev1.Pod, now time.Time, cooldown time.Duration) {
	for uid, ip := range st.assigned {
		if _, ok := pods[uid]; !ok {
			delete(st.assigned, uid)
			delete(st.warned, uid)
			st.cooling[ip] = now.Add(cooldown)
		}
	}
	for ip, at := range st.cooling {
		if !now.Before(at) {
			delete(st.cooling, ip)
		}
	}
}

// adopt records the addresses pods already carry (a restarted ipamd
// reads them back) and returns the pods still without one, oldest first.
func (st *nodeState) adopt(pods map[types.UID]*corev1.Pod) []*corev1.Pod {
	var pending []*corev1.Pod
	for uid, p := range pods {
		if ip := p.Annotations[PodIPsAnnotation]; ip != "" {
			if _, ok := st.assigned[uid]; !ok && slices.Contains(st.held, ip) {
				st.assigned[uid] = ip
			}
			continue
		}
		if _, ok := st.assigned[uid]; !ok {
			pending = append(pending, p)
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return pending
}

// grow attaches ENIs and takes addresses up to the warm target, one EC2
// call per ENI; a subnet without enough free addresses stops it and backs
// ipamd off.
func (c *CNI) grow(st *nodeState, now time.Time) {
	want := c.o.Settings.Want(st.limits, len(st.assigned)+len(st.cooling))
	for have := 1 + len(st.held); have < want.Addresses && !now.Before(st.backoff); have = 1 + len(st.held) {
		n := min(want.Addresses, st.enis*c.perENI(st)) - have // room on the attached ENIs
		enis := st.enis
		if n <= 0 { // attach one more ENI with its primary address
			n, enis = min(want.Addresses-have, c.perENI(st)), st.enis+1
		}
		ips, err := c.o.Cloud.AssignAddresses(st.instance, n)
		if err != nil {
			c.o.Log.Info("ipamd: no addresses from EC2", zap.String("instance", st.instance), zap.Error(err))
			st.backoff = now.Add(subnetBackoff)
			return
		}
		st.held, st.enis = append(st.held, ips...), enis
	}
}

// shrink gives back the addresses beyond the warm target, from the last
// ENI down, as long as no pod holds them and they are not cooling down.
func (c *CNI) shrink(st *nodeState) {
	want := c.o.Settings.Want(st.limits, len(st.assigned)+len(st.cooling))
	extra := 1 + len(st.held) - want.Addresses
	var back []string
	for i := len(st.held) - 1; i >= st.pinned && len(back) < extra && !st.inUse(st.held[i]); i-- {
		back = append(back, st.held[i])
	}
	if len(back) == 0 {
		return
	}
	st.held = st.held[:len(st.held)-len(back)]
	c.o.Cloud.UnassignAddresses(st.instance, back)
	st.enis = max(1, c.eniCount(st, 1+len(st.held)))
}

func (st *nodeState) inUse(ip string) bool {
	if _, ok := st.cooling[ip]; ok {
		return true
	}
	for _, a := range st.assigned {
		if a == ip {
			return true
		}
	}
	return false
}

// assign gives pending pods free addresses of the pool and returns those
// left without one.
func (c *CNI) assign(ctx context.Context, st *nodeState, pending []*corev1.Pod) []*corev1.Pod {
	var free []string
	for i, ip := range st.held {
		// In secondary-address mode each ENI's first held address is its
		// primary, which pods never get.
		if !st.inUse(ip) && !c.isENIPrimary(st, i) {
			free = append(free, ip)
		}
	}
	var left []*corev1.Pod
	for _, p := range pending {
		if len(free) == 0 {
			left = append(left, p)
			continue
		}
		ip := free[0]
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, PodIPsAnnotation, ip)
		_, err := c.o.Kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				left = append(left, p)
			}
			continue
		}
		free = free[1:]
		st.assigned[p.UID] = ip
	}
	return left
}

// isENIPrimary: held[i] is the primary address of an attached ENI (the
// first address taken for each ENI beyond the instance's own).
func (c *CNI) isENIPrimary(st *nodeState, i int) bool {
	per := c.perENI(st)
	return (i+1)%per == 0 // held[per-1] opens the second ENI, and so on
}

// warn records the kubelet's Event on pods the CNI could not give an
// address, once per retry period.
func (c *CNI) warn(ctx context.Context, node *corev1.Node, st *nodeState, pending []*corev1.Pod, now time.Time) {
	for _, p := range pending {
		at, warned := st.warned[p.UID]
		if warned && now.Sub(at) < retrySandbox {
			continue
		}
		if !warned {
			c.containerCreating(ctx, node, p, now)
		}
		st.warned[p.UID] = now
		sandbox := make([]byte, 32)
		_, _ = rand.Read(sandbox)
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()), Namespace: p.Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, APIVersion: "v1",
				ResourceVersion: p.ResourceVersion},
			Reason: "FailedCreatePodSandBox", Type: corev1.EventTypeWarning,
			Message: fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: "+
				"plugin type=\"aws-cni\" name=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container", hex.EncodeToString(sandbox)),
			Source:         corev1.EventSource{Component: "kubelet", Host: node.Name},
			FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
		}
		if _, err := c.o.Kube.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			c.o.Log.Debug("cni: event", zap.Error(err))
		}
	}
}

// nextLook is when the node needs another look without a change: a
// cooling address coming back, or pods waiting on an address.
func (st *nodeState) nextLook(now time.Time, waiting bool) time.Duration {
	var next time.Duration
	for _, at := range st.cooling {
		if d := at.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	if waiting && (next == 0 || retrySandbox < next) {
		next = retrySandbox
	}
	return next
}

// containerCreating writes the status the kubelet gives a pod whose
// sandbox it cannot create: Pending, its containers waiting in
// ContainerCreating, not ready.
func (c *CNI) containerCreating(ctx context.Context, node *corev1.Node, p *corev1.Pod, now time.Time) {
	var waiting []map[string]any
	var names []string
	for _, ct := range p.Spec.Containers {
		names = append(names, ct.Name)
		waiting = append(waiting, map[string]any{"name": ct.Name, "image": ct.Image, "ready": false, "restartCount": 0, "started": false,
			"state": map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}})
	}
	ts := now.UTC().Format(time.RFC3339)
	notReady := fmt.Sprintf("containers with unready status: %v", names)
	status := map[string]any{
		"conditions": []map[string]any{
			{"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": ts},
			{"type": "Initialized", "status": "True", "lastTransitionTime": ts},
			{"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": notReady, "lastTransitionTime": ts},
			{"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady", "message": notReady, "lastTransitionTime": ts},
		},
		"containerStatuses": waiting, "startTime": ts,
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			status["hostIP"], status["hostIPs"] = a.Address, []map[string]string{{"ip": a.Address}}
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": status})
	if _, err := c.o.Kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		c.o.Log.Debug("cni: pod status", zap.String("pod", p.Name), zap.Error(err))
	}
}
