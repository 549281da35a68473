package kube

import (
	"errors"
	"syscall"
)

// The local control plane needs process groups and signals; it runs on Linux
// and macOS. On Windows, Start fails with errUnsupported.
var errUnsupported = errors.New("sim/kube: the local control plane is not supported on Windows")

func childSysProcAttr() *syscall.SysProcAttr { return nil }
func terminateGroup(int) error               { return errUnsupported }
func killGroup(int) error                    { return errUnsupported }
func pidAlive(int) bool                      { return false }
func processCommand(int) string              { return "" }
func portHolder(int) string                  { return "" }

// platformCheck reports whether the local control plane can run here.
func platformCheck() error { return errUnsupported }
