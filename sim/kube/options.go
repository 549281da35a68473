package kube

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Ports are the loopback TCP ports of the control plane. A zero field takes
// its default from DefaultPorts.
type Ports struct {
	Etcd              int // etcd client URL (default 23790)
	EtcdPeer          int // etcd peer URL (default 23791)
	APIServer         int // kube-apiserver HTTPS (default 16443)
	Scheduler         int // kube-scheduler HTTPS /healthz (default 16459)
	ControllerManager int // kube-controller-manager HTTPS /healthz (default 16457)
	Kwok              int // kwok HTTP /healthz (default 16480)
}

// DefaultPorts returns the ports `starter dev` uses. They sit away from the
// well-known Kubernetes ports so a local world can run next to kind or minikube.
func DefaultPorts() Ports {
	return Ports{Etcd: 23790, EtcdPeer: 23791, APIServer: 16443, Scheduler: 16459, ControllerManager: 16457, Kwok: 16480}
}

// DefaultControllers are the kube-controller-manager controllers the local world
// runs: PDB status (disruption), namespace deletion, ownerReference garbage
// collection, default ServiceAccounts, ReplicaSets/Deployments (re-create
// evicted pods), StatefulSets (pods and their claims), Jobs and their TTL
// cleanup, and the volume binder (binds pre-bound and matching static
// PersistentVolumes to claims, as on a real cluster) with the claims of
// generic ephemeral volumes, DaemonSets (a pod on every node, as the
// EKS add-ons run) and the pod garbage collector (pods of a deleted Node
// go with it). No node-lifecycle controller: kwok keeps nodes
// Ready and the TaintNodesByCondition admission plugin is disabled. No
// attach/detach controller and no CSI provisioner: nothing attaches volumes
// or provisions them dynamically (a WaitForFirstConsumer claim stays
// unbound and its pod Pending, as on a cluster without the EBS CSI
// driver's controller).
var DefaultControllers = []string{
	"disruption-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"replicaset-controller",
	"deployment-controller",
	"statefulset-controller",
	"job-controller",
	"ttl-after-finished-controller",
	"persistentvolume-binder-controller",
	"ephemeral-volume-controller",
	"daemonset-controller",
	"pod-garbage-collector-controller",
}

// Options configure Start. The zero value is usable from inside the repository.
type Options struct {
	// StateDir holds etcd data, PKI, the kubeconfig, logs and pid files; a
	// second Start on the same directory resumes the cluster. Default:
	// .joinery/kube under the repository root (or the working directory when
	// no repository is found).
	StateDir string

	// Fresh removes StateDir's contents before starting (a new, empty cluster).
	Fresh bool

	// BinDir holds etcd, kube-apiserver, kube-scheduler, kube-controller-manager
	// and kwok. Default: run hack/kube/build.sh, which builds what is missing
	// (minutes, first time only) and prints the folder.
	BinDir string

	// Ports of the components; zero fields take DefaultPorts.
	Ports Ports

	// Controllers overrides DefaultControllers (kube-controller-manager --controllers).
	Controllers []string

	// ReadyTimeout bounds the wait for each component to become ready.
	// Default: 2 minutes (far more than kube-apiserver needs on an idle
	// machine, enough for a loaded one).
	ReadyTimeout time.Duration

	// Log receives one line per lifecycle step ("etcd ready in 0.31s ...").
	// Default: discard.
	Log io.Writer

	// Progress receives the build script's progress lines ("building
	// kube-apiserver ..."). Default: Log.
	Progress io.Writer
}

// withDefaults returns a copy of o with every default filled in and StateDir
// made absolute.
func (o Options) withDefaults() (Options, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Log = &syncWriter{w: o.Log} // components report readiness concurrently
	if o.Progress == nil {
		o.Progress = o.Log
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	if len(o.Controllers) == 0 {
		o.Controllers = DefaultControllers
	}
	d := DefaultPorts()
	for _, p := range []struct {
		v   *int
		def int
	}{
		{&o.Ports.Etcd, d.Etcd}, {&o.Ports.EtcdPeer, d.EtcdPeer}, {&o.Ports.APIServer, d.APIServer},
		{&o.Ports.Scheduler, d.Scheduler}, {&o.Ports.ControllerManager, d.ControllerManager}, {&o.Ports.Kwok, d.Kwok},
	} {
		if *p.v == 0 {
			*p.v = p.def
		}
	}
	if o.StateDir == "" {
		base, err := os.Getwd()
		if err != nil {
			return o, err
		}
		if root, err := findRepoRoot(base); err == nil {
			base = root
		}
		o.StateDir = filepath.Join(base, ".joinery", "kube")
	}
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		return o, fmt.Errorf("state dir %s: %w", o.StateDir, err)
	}
	o.StateDir = abs
	return o, nil
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
