//go:build !linux

package main

import "os/exec"

// dieWithParent: only Linux can tie the worker's life to the bench's; a
// bench killed hard elsewhere leaves its worker running.
func dieWithParent(*exec.Cmd) {}
