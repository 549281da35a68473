package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseName is the coordination.k8s.io Lease the pending-pod watchers of
// several worker replicas elect a leader with: only the leader batches pods
// into Provision workflows (two would buy capacity twice), and it alone
// runs the EC2NodeClass reconciler and the pod-events controller; every
// replica runs the Temporal worker.
const LeaseName = "joinery-provisioner"

// runLeading runs fn while this process holds the Lease in namespace,
// until ctx ends. Losing the lease cancels fn's context.
func runLeading(ctx context.Context, kc kubernetes.Interface, namespace string, log *zap.Logger, fn func(context.Context)) error {
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s-%d", host, os.Getpid())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(namespace),
		Client:     kc.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true, Name: LeaseName,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				log.Info("leading the pending-pod watcher", zap.String("identity", id))
				fn(lctx)
			},
			OnStoppedLeading: func() { log.Info("stopped leading the pending-pod watcher", zap.String("identity", id)) },
		},
	})
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		le.Run(ctx) // returns when leadership is lost; try again
	}
	return nil
}

func metaFor(namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: LeaseName, Namespace: namespace}
}
