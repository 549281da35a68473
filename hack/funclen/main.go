// Command funclen fails when a non-test Go function below the given
// folders is longer than -max lines (hack/lint.sh runs it): a function
// that long does several things, each of which wants a name.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	max := flag.Int("max", 100, "the most lines a function may have")
	flag.Parse()
	var long []string
	for _, root := range flag.Args() {
		l, err := longFuncs(root, *max)
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
		long = append(long, l...)
	}
	for _, l := range long {
		fmt.Fprintln(os.Stderr, l)
	}
	if len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d functions over %d lines: split them\n", len(long), *max)
		os.Exit(1)
	}
}

// longFuncs lists the functions (file:line name: N lines) over max lines
// in the non-test Go files below root, skipping hidden folders and
// testdata.
func longFuncs(root string, max int) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > max {
				out = append(out, fmt.Sprintf("%s:%d %s: %d lines", p, start.Line, fd.Name.Name, n))
			}
		}
		return nil
	})
	return out, err
}
