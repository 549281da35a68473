package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Binaries are the programs Start needs in the bin folder.
var Binaries = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok"}

// resolveBinDir returns the folder holding the control-plane binaries: binDir
// if set, else the folder hack/kube/build.sh prints after building whatever is
// missing (its progress lines, e.g. "joinery: building kube-apiserver ...",
// are streamed to progress).
func resolveBinDir(ctx context.Context, binDir string, progress io.Writer) (string, error) {
	if binDir != "" {
		abs, err := filepath.Abs(binDir)
		if err != nil {
			return "", err
		}
		return abs, checkBinaries(abs, "set Options.BinDir to the folder hack/kube/build.sh prints")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := findRepoRoot(wd)
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, buildScript)
	var stdout bytes.Buffer
	tail := &lastLines{n: 30}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(progress, tail)
	cmd.SysProcAttr = childSysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) } // the go builds too, not only bash
	cmd.WaitDelay = 5 * time.Second                                 // do not hang on a grandchild holding stderr open
	if err := startCmd(cmd); err != nil {
		return "", fmt.Errorf("run %s: %w", script, err)
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("building the control plane (%s): %w", script, ctx.Err())
		}
		return "", fmt.Errorf("%s failed (%v); its last lines:\n%s", script, err, indent(tail.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("%s printed no folder", script)
	}
	return dir, checkBinaries(dir, "run "+script+" to see why it did not build them")
}

// checkBinaries fails if a required binary is missing from dir.
func checkBinaries(dir, hint string) error {
	var missing []string
	for _, b := range Binaries {
		st, err := os.Stat(filepath.Join(dir, b))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s missing from %s: %s", strings.Join(missing, ", "), dir, hint)
	}
	return nil
}

// lastLines is an io.Writer keeping the last n lines written to it.
type lastLines struct {
	mu    sync.Mutex
	n     int
	lines []string
	part  string
}

func (l *lastLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	parts := strings.Split(l.part+string(b), "\n")
	l.part = parts[len(parts)-1]
	l.lines = append(l.lines, parts[:len(parts)-1]...)
	if len(l.lines) > l.n {
		l.lines = l.lines[len(l.lines)-l.n:]
	}
	return len(b), nil
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.lines, "\n")
	if l.part != "" {
		s += "\n" + l.part
	}
	return s
}
