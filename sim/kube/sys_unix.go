//go:build unix

package kube

import (
	"errors"
	"syscall"
)

// childSysProcAttr puts a child in its own process group, so that a Ctrl-C in
// the terminal reaches only our process (which then stops the children in
// order), and, on Linux, asks the kernel to SIGKILL the child when the thread
// that forked it dies, so no etcd or kube-apiserver outlives a crashed run.
func childSysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
}

// signalGroup sends sig to the process group led by pid (children are started
// with Setpgid, so their pid is their group id), falling back to the process.
func signalGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err == nil || !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return syscall.Kill(pid, sig)
}

func terminateGroup(pid int) error { return signalGroup(pid, syscall.SIGTERM) }
func killGroup(pid int) error      { return signalGroup(pid, syscall.SIGKILL) }

// pidAlive reports whether a process with this pid exists (it may belong to
// another user: EPERM still means alive).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// platformCheck reports whether the local control plane can run here.
func platformCheck() error { return nil }
