package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRepo makes a directory that looks like the repository, with a
// hack/kube/build.sh running script, and changes into a subdirectory of it.
func fakeRepo(t *testing.T, script string) (root string) {
	root = t.TempDir()
	os.MkdirAll(filepath.Join(root, "hack", "kube"), 0o755)
	os.MkdirAll(filepath.Join(root, "sim", "kube"), 0o755)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example\n"), 0o644)
	os.WriteFile(filepath.Join(root, buildScript), []byte(script), 0o755)
	t.Chdir(filepath.Join(root, "sim", "kube"))
	return root
}

func TestResolveBinDirRunsBuildScript(t *testing.T) {
	bin := t.TempDir()
	for _, b := range Binaries {
		os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755)
	}
	fakeRepo(t, "#!/usr/bin/env bash\necho 'joinery: building kube-apiserver v1.37.2 ...' >&2\necho noise\necho "+bin+"\n")
	var progress bytes.Buffer
	got, err := resolveBinDir(t.Context(), "", &progress)
	if err != nil {
		t.Fatal(err)
	}
	if got != bin {
		t.Errorf("bin dir %q, want %q", got, bin)
	}
	if !strings.Contains(progress.String(), "building kube-apiserver") {
		t.Errorf("progress not streamed: %q", progress.String())
	}
}

func TestResolveBinDirErrors(t *testing.T) {
	fakeRepo(t, "#!/usr/bin/env bash\necho 'go: cannot find module' >&2\nexit 1\n")
	_, err := resolveBinDir(t.Context(), "", &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "cannot find module") {
		t.Errorf("failed build: %v", err)
	}

	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "etcd"), []byte("#!/bin/sh\n"), 0o755)
	_, err = resolveBinDir(t.Context(), empty, nil)
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver, kube-scheduler, kube-controller-manager, kwok missing from "+empty) {
		t.Errorf("incomplete BinDir: %v", err)
	}

	t.Chdir(t.TempDir()) // outside any repository
	if _, err := resolveBinDir(t.Context(), "", nil); err == nil || !strings.Contains(err.Error(), "Options.BinDir") {
		t.Errorf("outside the repo: %v", err)
	}
}
