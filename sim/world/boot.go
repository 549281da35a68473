package world

import (
	"sort"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/ec2"
	"github.com/joinery/joinery/sim/internal/delay"
	"github.com/joinery/joinery/sim/kubelet"
)

// BootPhases are the durations of a node's boot, from launch: EC2's
// pending→running, then the OS, node agent and kubelet until the Node
// registers NotReady, then the CNI until it is Ready. A zero field takes
// its default, a negative one is no wait at all.
type BootPhases struct {
	Pending      time.Duration // default: Options.BootDelay, else 2 s
	Register     time.Duration // default DefaultBootRegister
	NetworkReady time.Duration // default DefaultBootNetworkReady
}

// The local world's boot phases after running: short, so tests pay
// little, but never none, so NodeClaims spend time registered and not
// Ready as on EKS. EKSBoot is what a real node takes.
const (
	DefaultBootRegister     = time.Second
	DefaultBootNetworkReady = time.Second
)

// EKSBoot are boot phases near an EKS node's (launch to Ready in about
// 45 s: a few seconds pending, about 30 s to registration as the boot
// timelines measured on AL2 and AL2023 show, then the VPC CNI's start).
var EKSBoot = BootPhases{Pending: 5 * time.Second, Register: 30 * time.Second, NetworkReady: 8 * time.Second}

func (b BootPhases) withDefaults(bootDelay time.Duration) BootPhases {
	if b.Pending == 0 {
		b.Pending = bootDelay
	}
	// Pending stays as given: ec2.Options reads 0 as its default and
	// negative as none.
	b.Register = delay.OrDefault(b.Register, DefaultBootRegister)
	b.NetworkReady = delay.OrDefault(b.NetworkReady, DefaultBootNetworkReady)
	return b
}

// imageAsSeenByNode is what the booting node knows of its image: EC2's
// description of it.
func (w *World) imageAsSeenByNode(id string) (kubelet.Image, bool) {
	im, ok := w.EC2.Image(id)
	return kubelet.Image{Arch: im.Architecture, Variant: im.Variant, Name: im.Name, Description: im.Description}, ok
}

// instanceAlive: the instance is still pending or running.
func (w *World) instanceAlive(id string) bool {
	in, ok := w.EC2.Instance(id)
	return ok && (in.State == ec2.StatePending || in.State == ec2.StateRunning)
}

// bootTimes records how long nodes took from launch to Ready.
type bootTimes struct {
	mu     sync.Mutex
	launch func(id string) (time.Time, bool)
	took   []time.Duration
}

func (b *bootTimes) ready(inst kubelet.Instance, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.launch == nil {
		return
	}
	if t, ok := b.launch(inst.ID); ok {
		b.took = append(b.took, at.Sub(t))
	}
}

// BootTimes returns how long each node that went Ready in this process
// took from its launch (EC2's LaunchTime), shortest first.
func (w *World) BootTimes() []time.Duration {
	w.boots.mu.Lock()
	defer w.boots.mu.Unlock()
	out := append([]time.Duration(nil), w.boots.took...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
