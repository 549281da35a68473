package kube

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// process is one running control-plane binary.
type process struct {
	name    string // component name: etcd, kube-apiserver, ...
	cmd     *exec.Cmd
	logPath string
	pidPath string
	started time.Time
	done    chan struct{} // closed once the process has exited
	exitErr error         // valid after done
}

// startProcess runs bin with args, its output going to logPath (the previous
// run's log is kept as logPath.1), and records its pid in pidPath.
func startProcess(name, bin string, args []string, logPath, pidPath string) (*process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(pidPath), 0o755); err != nil {
		return nil, err
	}
	if fileExists(logPath) {
		_ = os.Rename(logPath, logPath+".1")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "# %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childSysProcAttr()
	cmd.Env = os.Environ()
	if err := startCmd(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logf.Close() // the child holds its own descriptor
	p := &process{name: name, cmd: cmd, logPath: logPath, pidPath: pidPath, started: time.Now(), done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()
	if err := writeFileAtomic(pidPath, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		p.stop(0)
		return nil, err
	}
	return p, nil
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs it,
// and removes the pid file. It returns once the process has exited.
func (p *process) stop(grace time.Duration) {
	if !p.exited() {
		_ = terminateGroup(p.pid())
		t := time.NewTimer(grace)
		select {
		case <-p.done:
		case <-t.C:
			_ = killGroup(p.pid())
			<-p.done
		}
		t.Stop()
	}
	_ = os.Remove(p.pidPath)
}

// failure wraps err with the last lines of the process's log.
func (p *process) failure(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return fmt.Errorf("%s; last lines of %s:\n%s", msg, p.logPath, indent(tailForError(p.logPath)))
}

// tailForError returns the end of a log for an error message: the last 25
// lines, or, when the process panicked, the lines leading up to the panic
// without the goroutine dump that follows it.
func tailForError(path string) string {
	lines := strings.Split(tailFile(path, 400), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "panic: ") || strings.HasPrefix(lines[i], "fatal error: ") {
			return strings.Join(lines[max(0, i-12):i+1], "\n") + "\n[goroutine dump omitted]"
		}
	}
	return strings.Join(lines[max(0, len(lines)-25):], "\n")
}

// tailFile returns up to n last lines of the file at path (from its last 64 KiB).
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// checkStalePids looks at the pid files in runDir: a live process named in one
// is a control plane still running on this state directory (another `starter
// dev`, or a run whose stop failed), which must be stopped first. Pid files of
// dead processes are left-overs from a crash and are removed; their names are
// returned.
func checkStalePids(runDir, stateDir string, names []string) (stale []string, err error) {
	var alive []string
	var pids []string
	for _, name := range names {
		f := filepath.Join(runDir, name+".pid")
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		pid, _ := strconv.Atoi(string(bytes.TrimSpace(b)))
		if pidAlive(pid) {
			if cmd := processCommand(pid); cmd == "" || strings.Contains(cmd, name) {
				alive = append(alive, fmt.Sprintf("%s (pid %d)", name, pid))
				pids = append(pids, strconv.Itoa(pid))
				continue
			}
		}
		stale = append(stale, name)
		_ = os.Remove(f)
	}
	if len(alive) > 0 {
		return nil, fmt.Errorf("%s from an earlier start still running on %s: is another `starter dev` running? stop it (or kill %s) and try again",
			strings.Join(alive, ", "), stateDir, strings.Join(pids, " "))
	}
	return stale, nil
}
