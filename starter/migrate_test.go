package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// runMigrate runs `starter migrate` with args and returns stdout, stderr
// and the error.
func runMigrate(args ...string) (string, string, error) {
	cmd := newMigrateCommand()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// The command prints migrate's golden YAML on stdout and its change lines
// on stderr.
func TestMigrateCommand(t *testing.T) {
	out, errOut, err := runMigrate("-f", "migrate/testdata/guide.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden, _ := os.ReadFile("migrate/testdata/guide.golden")
	changes, _ := os.ReadFile("migrate/testdata/guide.changes")
	if out != string(golden) {
		t.Errorf("stdout:\n%s\nwant migrate/testdata/guide.golden", out)
	}
	if want := string(changes) + "2 objects, 9 changes\n"; errOut != want {
		t.Errorf("stderr:\n%s\nwant\n%s", errOut, want)
	}
}

// A refusal writes nothing on stdout, each refusal on stderr, and fails.
func TestMigrateCommandRefuses(t *testing.T) {
	out, errOut, err := runMigrate("-f", "migrate/testdata/ubuntu-refused.yaml")
	if err == nil || err.Error() != "1 refused; nothing written" || out != "" {
		t.Fatalf("err %v, stdout %q", err, out)
	}
	want := "cannot convert: migrate/testdata/ubuntu-refused.yaml document 1: karpenter.k8s.aws/v1beta1 EC2NodeClass ubuntu: spec.amiFamily: Ubuntu: v1 has no Ubuntu family"
	if !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q", errOut)
	}
	if _, _, err := runMigrate(); err == nil {
		t.Error("no -f: no error")
	}
	if _, _, err := runMigrate("-f", "migrate/testdata/guide.yaml", "-o", "table"); err == nil {
		t.Error("-o table: no error")
	}
}
