package activities

import (
	"strings"
	"time"

	"github.com/joinery/joinery/providers/kube"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
	corev1 "k8s.io/api/core/v1"
)

// liveNominations maps the UID of each pending pod that a live NodeClaim
// was launched for to that NodeClaim's name. A nomination lives while the
// claim is in flight and for NominationWindow after it initializes, but
// once the claim's Node is Ready only as far as the pod still fits the
// node's free allocatable (nominated pods in annotation order): the
// kube-scheduler binds pending pods in its own order, and a pod left
// without room is planned again at once instead of waiting out the window.
func (a *world) liveNominations(pending []*corev1.Pod, now time.Time) map[string]string {
	byUID := make(map[string]*corev1.Pod, len(pending))
	for _, p := range pending {
		byUID[string(p.UID)] = p
	}
	out := map[string]string{}
	for _, nc := range a.Cluster.NodeClaims() {
		if nc.DeletionTimestamp != nil || !a.nominationLive(nc, now) {
			continue
		}
		var free resources.List
		bounded := false
		if nc.Status.NodeName != "" {
			if n, err := a.Cluster.Nodes.Get(nc.Status.NodeName); err == nil && nodeReady(n) {
				free, _ = resources.FromResourceList(n.Status.Allocatable)
				for _, p := range a.Cluster.PodsOnNode(n.Name) {
					if kube.IsActive(p) {
						free = free.Sub(solver.PodFromK8s(p).Requests)
					}
				}
				bounded = true
			}
		}
		for _, uid := range strings.Split(nc.Annotations[AnnotationNominatedPods], ",") {
			p := byUID[uid]
			if p == nil {
				continue
			}
			if bounded {
				req := solver.PodFromK8s(p).Requests
				if !req.Fits(free) {
					continue
				}
				free = free.Sub(req)
			}
			out[uid] = nc.Name
		}
	}
	return out
}
