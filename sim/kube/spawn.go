package kube

import (
	"os/exec"
	"runtime"
	"sync"
)

// Children are forked from a single goroutine locked to its OS thread for the
// rest of the program's life. On Linux, PR_SET_PDEATHSIG fires when the
// *thread* that forked a child exits, not the process; the Go runtime may
// retire an ordinary thread (for example when a goroutine that called
// runtime.LockOSThread returns without unlocking), which would kill etcd or
// kube-apiserver mid-run. A thread that never returns fires the signal only
// when the whole process dies, which is exactly the guarantee we want.

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

// startCmd starts cmd (cmd.Start) from the dedicated spawner thread.
func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for r := range spawnCh {
				r.reply <- r.cmd.Start()
			}
		}()
	})
	reply := make(chan error, 1)
	spawnCh <- spawnRequest{cmd: cmd, reply: reply}
	return <-reply
}
