package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/joinery/joinery/activities"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// recordingRegistry records the names registered on it. The embedded
// interface is nil: any other registration panics, failing the test.
type recordingRegistry struct {
	worker.Registry
	t                     *testing.T
	workflows, activities []string
}

func (r *recordingRegistry) RegisterWorkflow(w any) {
	r.t.Errorf("workflow %T registered without a name", w)
}

func (r *recordingRegistry) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows = append(r.workflows, o.Name)
}

func (r *recordingRegistry) RegisterActivity(a any) {
	r.t.Errorf("activity %T registered without a name", a)
}

func (r *recordingRegistry) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	r.activities = append(r.activities, o.Name)
}

// nameConstants reads the workflows package's source for its string
// constants whose identifier matches re: wherever the names live in the
// package, a new one is checked without editing this test.
func nameConstants(t *testing.T, re *regexp.Regexp) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../workflows/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("workflows sources: %v (%d files)", err, len(files))
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !re.MatchString(id.Name) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: %s is not a string literal", fset.Position(id.Pos()), id.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[id.Name] = v
				}
			}
		}
	}
	return out
}

// checkRegistered fails unless the registered names are exactly the
// constants' values, each registered once.
func checkRegistered(t *testing.T, kind string, consts map[string]string, registered []string) {
	t.Helper()
	count := map[string]int{}
	for _, n := range registered {
		count[n]++
	}
	var ids []string
	for id := range consts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	values := map[string]bool{}
	for _, id := range ids {
		v := consts[id]
		values[v] = true
		switch count[v] {
		case 1:
		case 0:
			t.Errorf("%s %s = %q is not registered on the worker", kind, id, v)
		default:
			t.Errorf("%s %s = %q is registered %d times", kind, id, v, count[v])
		}
	}
	for _, n := range registered {
		if !values[n] {
			t.Errorf("%s %q is registered but has no name constant in workflows", kind, n)
		}
	}
	if len(consts) == 0 {
		t.Errorf("found no %s name constants in workflows", kind)
	}
}

func TestEveryActivityNameIsRegisteredOnTheWorker(t *testing.T) {
	r := &recordingRegistry{t: t}
	activities.New(activities.Deps{}).Register(r)
	(&activities.InterruptionPoller{}).Register(r)
	checkRegistered(t, "activity", nameConstants(t, regexp.MustCompile(`^Activity[A-Z]`)), r.activities)
}

func TestEveryWorkflowNameIsRegisteredOnTheWorker(t *testing.T) {
	r := &recordingRegistry{t: t}
	RegisterWorkflows(r)
	checkRegistered(t, "workflow", nameConstants(t, regexp.MustCompile(`^[A-Z][A-Za-z]*Workflow$`)), r.workflows)
}
