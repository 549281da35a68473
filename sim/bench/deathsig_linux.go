package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel SIGKILL the worker when the bench dies,
// however it ends.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
