package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// buildScript is the repository-relative path of the script that builds the
// control-plane binaries and prints their folder.
const buildScript = "hack/kube/build.sh"

// findRepoRoot walks up from dir to the first directory holding a go.mod and
// hack/kube/build.sh (nested tool modules such as hack/kube/k8s are skipped).
func findRepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, buildScript)) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod with %s above %s: run inside the joinery repository or set Options.BinDir", buildScript, dir)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}
