//go:build unix && !linux

package kube

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal is a no-op outside Linux (no PR_SET_PDEATHSIG); Stop and the
// stale pid check are the safety net there.
func setDeathSignal(*syscall.SysProcAttr) {}

// processCommand returns the command line of pid via ps(1), "" if unknown.
func processCommand(pid int) string {
	out, err := exec.Command("ps", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// portHolder is not implemented outside Linux.
func portHolder(int) string { return "" }
