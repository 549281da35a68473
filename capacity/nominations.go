package capacity

import (
	"encoding/json"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/lifecycle"
	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AnnotationNominatedPods on a NodeClaim lists the UIDs (comma-separated) of
// the pending pods it was launched for, so later batches do not buy
// capacity for them twice.
const AnnotationNominatedPods = "joinery.sh/nominated-pods"

// DefaultNominationWindow is how long a NodeClaim's nominations outlive its
// Node becoming initialized: the kube-scheduler binds within a few seconds
// (its backoff queue), and a pod it placed elsewhere gets capacity again
// soon after.
const DefaultNominationWindow = 10 * time.Second

// HintWait bounds how long past its Node's initialization a nominee not
// yet pointed at that node (SchedulerHints) keeps its nomination: in a
// burst the pointers for hundreds of nodes queue behind a busy API server
// for tens of seconds, and a nominee dropped before its pointer is written
// is never pointed and is planned again, buying a node for a pod that
// already has one. A pointer the scheduler cleared (the pod no longer fits
// there for a reason other than resources, which Of checks itself) also
// holds until then.
const HintWait = 60 * time.Second

// Nominations says which pending pods live NodeClaims were launched for
// (AnnotationNominatedPods), from the informer caches: the snapshot leaves
// those pods to their claims, and the ledger does not count them as work.
type Nominations struct {
	cluster *kube.Cluster
	window  time.Duration
	// booked says whether a gang holds the NodeClaim (its nominations
	// live as long as the booking).
	booked func(*apiv1.NodeClaim, time.Time) bool
	req    *podRequests
	// noHints: no pointer is ever written, so none is waited for.
	noHints atomic.Bool
}

// WithoutHints says that no scheduler hint is written (the worker's
// --scheduler-hints=false): a nominee past the window no longer waits for
// a pointer.
func (n *Nominations) WithoutHints() { n.noHints.Store(true) }

// Hinting says whether pending pods are pointed at their nodes, so a node
// launched for pods waits for its pointers before it opens
// (lifecycle.HoldOpening).
func (n *Nominations) Hinting() bool { return !n.noHints.Load() }

// NewNominations reads nominations from the cluster's caches; window is
// how long a claim's nominations outlive its Node's initialization (0:
// DefaultNominationWindow).
func NewNominations(cl *kube.Cluster, window time.Duration, booked func(*apiv1.NodeClaim, time.Time) bool) *Nominations {
	return &Nominations{cluster: cl, window: window, booked: booked, req: newPodRequests(cl)}
}

// Window is the nomination window, DefaultNominationWindow if unset.
func (n *Nominations) Window() time.Duration {
	if n.window == 0 {
		return DefaultNominationWindow
	}
	return n.window
}

// Live says whether a NodeClaim still holds its nominations at now: until
// its Node has been initialized for the window (always while a gang has
// it booked).
func (n *Nominations) Live(nc *apiv1.NodeClaim, now time.Time) bool {
	if n.booked(nc, now) {
		return true // held for a gang's pods: not disrupted
	}
	if init := initializedAt(nc); !init.IsZero() {
		return now.Sub(init) < n.Window()
	}
	return true
}

// Of maps the UID of each pending pod that a live NodeClaim was launched
// for, and that is not Held on a Node (Explain), to that NodeClaim's name;
// past the window, a pod whose pointer is due (SchedulerHints) keeps its
// nomination. Once the claim's Node is Ready a
// nomination holds only as far as the pod still fits the node's free
// allocatable (nominated pods in annotation order): the kube-scheduler
// binds pending pods in its own order, and a pod left without room is
// planned again at once instead of waiting out the window. A pod left
// without room because the scheduler bound there a pod of the same owner
// nominated to a claim still booting takes that pod's place on the
// booting claim instead, and so does a pod whose place was taken by a pod
// it is interchangeable with (placeKey): the nodes of one wave come Ready
// one by one, and the first ones take whichever pods the scheduler picks.
func (n *Nominations) Of(pending []*corev1.Pod, now time.Time) map[string]string {
	return n.Explain(pending, now).Claim
}

// Lapsed counts the pending pods that a NodeClaim was launched for but
// that hold no nomination now, by why: their claim's Node has been
// initialized for longer than the window, or the pods the scheduler bound
// there left them no room.
type Lapsed struct {
	Window    int
	Displaced int
}

// Waits says what the pending pods wait for, by pod UID: a live NodeClaim
// launched for them (Claim), or the kube-scheduler on the existing Node
// they are pointed at (Held); the others are work for a plan, and Lapsed
// counts those whose nomination ended.
type Waits struct {
	Claim  map[string]string
	Held   map[string]string
	Lapsed Lapsed
}

// Explain is Of, with the pods Held on their nodes and the nominations that
// lapsed counted by why.
func (n *Nominations) Explain(pending []*corev1.Pod, now time.Time) Waits {
	held, room := n.held(pending)
	byUID := make(map[string]*corev1.Pod, len(pending))
	for _, p := range pending {
		if _, ok := held[string(p.UID)]; !ok {
			byUID[string(p.UID)] = p
		}
	}
	var live []*apiv1.NodeClaim
	nominees := map[string][]string{} // live claim -> its pending nominees
	lapsedUIDs := map[string]bool{}   // nominees of claims past the window
	claimOf := map[string]string{}    // nominated pod UID -> claim
	for _, nc := range n.cluster.NodeClaims() {
		if nc.DeletionTimestamp != nil {
			continue
		}
		uids := pendingNominees(nc, byUID)
		if !n.Live(nc, now) {
			// Past the window, the pods whose pointer is due still
			// wait for the scheduler.
			var waiting []string
			for _, uid := range uids {
				if n.awaitsScheduler(nc, byUID[uid], now) {
					waiting = append(waiting, uid)
				} else {
					lapsedUIDs[uid] = true
				}
			}
			if uids = waiting; len(uids) == 0 {
				continue
			}
		}
		live = append(live, nc)
		nominees[nc.Name] = uids
		for _, uid := range strings.Split(nc.Annotations[AnnotationNominatedPods], ",") {
			if uid != "" {
				claimOf[uid] = nc.Name
			}
		}
	}
	out := map[string]string{}
	var displaced []displacedPod
	left := map[string]resources.List{} // Ready claim -> free allocatable left
	vacated := n.vacated(live, claimOf)
	var lapsed Lapsed
	for _, nc := range live {
		free, bounded := n.freeOnNode(nc, room)
		for _, uid := range nominees[nc.Name] {
			p := byUID[uid]
			if bounded {
				req := n.req.of(p)
				if !req.Fits(free) {
					displaced = append(displaced, displacedPod{p, req})
					continue
				}
				free = free.Sub(req)
			}
			out[uid] = nc.Name
		}
		if bounded {
			left[nc.Name] = free
		}
	}
	// Biggest first: the places left are pieces of what smaller pods
	// vacated, and a big pod finds one only while they are whole.
	sort.SliceStable(displaced, func(i, j int) bool { return bigger(displaced[i].req, displaced[j].req) })
	for _, d := range displaced {
		if name := takePlace(d, live, left, vacated); name != "" {
			out[string(d.pod.UID)] = name
		} else {
			lapsed.Displaced++
		}
	}
	for uid := range lapsedUIDs {
		if _, ok := out[uid]; !ok {
			lapsed.Window++
		}
	}
	return Waits{Claim: out, Held: held, Lapsed: lapsed}
}

// Waiting maps each pending pod that waits for something (Explain: a
// NodeClaim or the scheduler on its Node) to that claim's or node's name:
// the pods a plan leaves alone.
func (n *Nominations) Waiting(pending []*corev1.Pod, now time.Time) map[string]string {
	w := n.Explain(pending, now)
	for uid, node := range w.Held {
		w.Claim[uid] = node
	}
	return w.Claim
}

// held finds the pending pods pointed (status.nominatedNodeName, whoever
// wrote it) at a Node they can go to and have room on: as in Karpenter (a
// "preempting" pod is not provisionable), each is the kube-scheduler's to
// place, which keeps its room there, and is not planned again until the
// pointer goes or no longer holds. It returns them (pod UID -> Node) and
// what is left free on each such Node after them. A pointer the pod has
// no room behind (the scheduler keeps one where its preemption is off)
// holds nothing: the pod is planned.
func (n *Nominations) held(pending []*corev1.Pod) (map[string]string, map[string]resources.List) {
	out := map[string]string{}
	room := map[string]resources.List{}
	for _, p := range pending {
		name := p.Status.NominatedNodeName
		if name == "" {
			continue
		}
		node, err := n.cluster.Nodes.Get(name)
		if err != nil || !open(node, p) {
			continue
		}
		free, ok := room[name]
		if !ok {
			free = n.freeOn(node)
		}
		if req := n.req.of(p); req.Fits(free) {
			free = free.Sub(req)
			out[string(p.UID)] = name
		}
		room[name] = free
	}
	return out, room
}

// awaitsScheduler says whether a nominee of a claim past its window still
// waits for the scheduler on the claim's node: not pointed at a Node yet
// and, within HintWait of the node's initialization, due a pointer.
func (n *Nominations) awaitsScheduler(nc *apiv1.NodeClaim, p *corev1.Pod, now time.Time) bool {
	node := nc.Status.NodeName
	if node == "" {
		return false
	}
	if n.noHints.Load() || p.Status.NominatedNodeName != "" && n.nodeExists(p.Status.NominatedNodeName) {
		return false // a pointer that held would have made the pod Held
	}
	init := initializedAt(nc)
	return !init.IsZero() && now.Sub(init) < HintWait && n.pointable(nc, p)
}

// initializedAt is when the claim's Node was initialized (zero: not yet).
func initializedAt(nc *apiv1.NodeClaim) time.Time {
	for _, c := range nc.Status.Conditions {
		if c.Type == apiv1.ConditionInitialized && c.Status == "True" {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// pointable says whether the pod may be pointed at the claim's Node now:
// the Node is Ready and schedulable and the pod tolerates every taint it
// has but the opening one, so the scheduler can place the pod there at
// its next attempt once the node opens. A
// pointer written earlier does not hold: the scheduler clears it at the
// pod's next failed attempt (its preemption finds nothing and resets the
// nomination), and a booting node's arrival is what sets off that attempt.
func (n *Nominations) pointable(nc *apiv1.NodeClaim, p *corev1.Pod) bool {
	node, err := n.cluster.Nodes.Get(nc.Status.NodeName)
	return err == nil && open(node, p)
}

// open says whether the scheduler can place the pod on the Node now: Ready,
// schedulable, not going away, and every taint tolerated but the opening
// one, which goes once the node's pods are pointed at it.
func open(node *corev1.Node, p *corev1.Pod) bool {
	return lifecycle.Ready(node) && !node.Spec.Unschedulable && node.DeletionTimestamp == nil && solver.Tolerated(lifecycle.WithoutOpening(node.Spec.Taints), p.Spec.Tolerations)
}

// pendingNominees are the claim's nominees still pending, in annotation order.
func pendingNominees(nc *apiv1.NodeClaim, byUID map[string]*corev1.Pod) []string {
	var out []string
	for _, uid := range strings.Split(nc.Annotations[AnnotationNominatedPods], ",") {
		if byUID[uid] != nil {
			out = append(out, uid)
		}
	}
	return out
}

// displacedPod is a pending pod the scheduler left without room on its
// claim's Ready node, with its requests.
type displacedPod struct {
	pod *corev1.Pod
	req resources.List
}

// takePlace finds a claim whose nominee of the pod's kind (placeKey) the
// scheduler bound elsewhere, with room for the pod in that place (and, on
// a Ready node, in what is still free there), and takes that room.
func takePlace(d displacedPod, live []*apiv1.NodeClaim, left map[string]resources.List, vacated map[string]map[string]resources.List) string {
	key, req := placeKey(d.pod), d.req
	if key == "" {
		return ""
	}
	for _, nc := range live {
		room, ok := vacated[nc.Name][key]
		if !ok || !req.Fits(room) {
			continue
		}
		free, ready := left[nc.Name]
		if ready && !req.Fits(free) {
			continue
		}
		vacated[nc.Name][key] = room.Sub(req)
		if ready {
			left[nc.Name] = free.Sub(req)
		}
		return nc.Name
	}
	return ""
}

// placeKey names the pods that can take each other's place on a node ("":
// none can take this one's). Pods that constrain only the node itself
// (node selector, required node affinity, tolerations, runtime class), not
// where they stand against other pods (no spread, pod affinity or
// anti-affinity, host ports or volumes), and constrain it alike, go
// wherever one of them fits; other pods only where a pod of their own
// controller (one template) was planned.
func placeKey(p *corev1.Pod) string {
	if sig, ok := nodeOnlySignature(&p.Spec); ok {
		return "node-only/" + sig
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		return "owner/" + p.Namespace + "/" + string(ref.UID)
	}
	return ""
}

// nodeOnlySignature encodes the constraints of a pod that constrains only
// its node; false for any other pod.
func nodeOnlySignature(spec *corev1.PodSpec) (string, bool) {
	if len(spec.TopologySpreadConstraints) > 0 || hasClaimedVolume(spec.Volumes) {
		return "", false
	}
	var required *corev1.NodeSelector
	if a := spec.Affinity; a != nil {
		if a.PodAffinity != nil || a.PodAntiAffinity != nil {
			return "", false
		}
		if a.NodeAffinity != nil {
			required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
	}
	for _, c := range spec.Containers {
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				return "", false
			}
		}
	}
	sig, err := json.Marshal(struct {
		Selector     map[string]string
		Required     *corev1.NodeSelector
		Tolerations  []corev1.Toleration
		RuntimeClass *string
		Scheduler    string
	}{spec.NodeSelector, required, spec.Tolerations, spec.RuntimeClassName, spec.SchedulerName})
	return string(sig), err == nil
}

// hasClaimedVolume says whether a pod mounts a volume bound to a zone or
// node (a PersistentVolumeClaim or an ephemeral one).
func hasClaimedVolume(vs []corev1.Volume) bool {
	for _, v := range vs {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// freeOnNode is the free allocatable of the NodeClaim's Node, less the
// pods Held there (room: what held left on their nodes); false while it
// has no Ready Node (its nominations are not bounded yet).
func (n *Nominations) freeOnNode(nc *apiv1.NodeClaim, room map[string]resources.List) (resources.List, bool) {
	if nc.Status.NodeName == "" {
		return resources.List{}, false
	}
	if free, ok := room[nc.Status.NodeName]; ok {
		return free, true
	}
	node, err := n.cluster.Nodes.Get(nc.Status.NodeName)
	if err != nil || !lifecycle.Ready(node) {
		return resources.List{}, false
	}
	return n.freeOn(node), true
}

// freeOn is the Node's allocatable less the requests of its active pods
// and of the DaemonSet pods made for it but not bound yet (the scheduler
// binds them there: their room is not free for a held pod).
func (n *Nominations) freeOn(node *corev1.Node) resources.List {
	free, _ := resources.FromResourceList(node.Status.Allocatable)
	for _, p := range append(n.cluster.PodsOnNode(node.Name), n.cluster.PendingDaemonPodsFor(node.Name)...) {
		if kube.IsActive(p) {
			free = free.Sub(n.req.of(p))
		}
	}
	return free
}

// vacated is, for each live claim, the requests of its nominees the
// scheduler bound to another node (any node: one past its window, or not
// Joinery's), by placeKey: the room they left on the claim.
func (n *Nominations) vacated(live []*apiv1.NodeClaim, claimOf map[string]string) map[string]map[string]resources.List {
	nodeOf := make(map[string]string, len(live))
	for _, nc := range live {
		nodeOf[nc.Name] = nc.Status.NodeName
	}
	out := map[string]map[string]resources.List{}
	all, _ := n.cluster.Pods.List(labels.Everything())
	for _, p := range all {
		claim := claimOf[string(p.UID)]
		if claim == "" || p.Spec.NodeName == "" || p.Spec.NodeName == nodeOf[claim] || !kube.IsActive(p) {
			continue
		}
		key := placeKey(p)
		if key == "" {
			continue
		}
		if out[claim] == nil {
			out[claim] = map[string]resources.List{}
		}
		out[claim][key] = out[claim][key].Add(n.req.of(p))
	}
	return out
}

// bigger orders requests by CPU, then memory.
func bigger(a, b resources.List) bool {
	if a[resources.CPU] != b[resources.CPU] {
		return a[resources.CPU] > b[resources.CPU]
	}
	return a[resources.Memory] > b[resources.Memory]
}

// Hints says whether pending pods are pointed at their nodes (the
// worker's --scheduler-hints).
func (n *Nominations) Hints() bool { return !n.noHints.Load() }
