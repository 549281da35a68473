// Command testreport reads `go tool test2json` events (stdin) of one test
// binary's run and prints what `go test` prints without -v (the output of
// the tests that failed, and the result line), then the slowest tests:
// CI's log keeps failures readable and shows where its minutes go.
//
//	testreport [-slowest N] < events.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	slowest := flag.Int("slowest", 15, "how many of the slowest tests to list")
	flag.Parse()
	failed, err := report(os.Stdin, os.Stdout, *slowest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report prints the failed tests' output and the slowest top-level tests;
// failed is whether any test (or the binary) failed.
func report(r io.Reader, w io.Writer, slowest int) (failed bool, err error) {
	output := map[string]*strings.Builder{}
	var tail strings.Builder // output outside any test (the binary's own)
	elapsed := map[string]float64{}
	held := map[string]float64{} // time a test held a world (test/integration's slots)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(&tail, sc.Text()) // not an event: keep it
			continue
		}
		switch {
		case e.Action == "output" && e.Test != "":
			if secs, ok := heldFor(e.Output); ok {
				top, _, _ := strings.Cut(e.Test, "/")
				held[top] = secs
			}
			if output[e.Test] == nil {
				output[e.Test] = &strings.Builder{}
			}
			output[e.Test].WriteString(e.Output)
		case e.Action == "output":
			tail.WriteString(e.Output)
		case e.Action == "pass" && e.Test != "":
			delete(output, e.Test)
			if !strings.Contains(e.Test, "/") {
				elapsed[e.Test] = e.Elapsed
			}
		case e.Action == "skip" && e.Test != "":
			delete(output, e.Test)
		case e.Action == "fail":
			failed = true
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				elapsed[e.Test] = e.Elapsed
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	names := make([]string, 0, len(output))
	for name := range output {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.Contains(name, "/") { // a subtest's output is in its parent's
			fmt.Fprint(w, output[name].String())
			for _, sub := range names {
				if strings.HasPrefix(sub, name+"/") {
					fmt.Fprint(w, output[sub].String())
				}
			}
		}
	}
	fmt.Fprint(w, tail.String())
	if len(held) > 0 {
		fmt.Fprintf(w, "longest holders of a world (its slot, not the wait for one):\n")
		printSlowest(w, held, slowest)
	} else if len(elapsed) > 0 {
		fmt.Fprintf(w, "slowest tests:\n")
		printSlowest(w, elapsed, slowest)
	}
	return failed, nil
}

// heldFor reads the seconds of test/integration's "held world slot N for
// 12.3s" line.
func heldFor(line string) (float64, bool) {
	_, rest, ok := strings.Cut(line, "held world slot ")
	if !ok {
		return 0, false
	}
	var slot int
	var secs float64
	if n, _ := fmt.Sscanf(rest, "%d for %fs", &slot, &secs); n != 2 {
		return 0, false
	}
	return secs, true
}

func printSlowest(w io.Writer, elapsed map[string]float64, n int) {
	names := make([]string, 0, len(elapsed))
	for name := range elapsed {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return elapsed[names[i]] > elapsed[names[j]] })
	if len(names) > n {
		names = names[:n]
	}
	for _, name := range names {
		fmt.Fprintf(w, "  %6.1fs  %s\n", elapsed[name], name)
	}
}
