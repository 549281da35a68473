package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLongFuncsListsOnlyLongNonTestFunctions(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 1\n", lines-2) + "}\n"
	}
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package p\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", body("short", 5)+body("edge", 10)+body("long", 11))
	write("a_test.go", body("longTest", 50))
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("testdata/x.go", body("skipped", 50))
	got, err := longFuncs(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasSuffix(got[0], "a.go:18 long: 11 lines") {
		t.Fatalf("got %q, want only a.go's long (11 lines)", got)
	}
}
