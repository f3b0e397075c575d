//go:build ignore

// testtimes reads `go test -json` on standard input and writes what `go
// test` would have written, then how many tests ran and the slowest
// top-level tests with their elapsed times. .ci/run and the Makefile pipe
// every test run through it:
//
//	go test -json ./... | go run scripts/testtimes.go [-v] [-slowest 20] [-label interop]
//
// Without -v, only the package lines and the output of failed tests are
// written (as `go test` without -v); with -v, everything. It exits 1 when
// a test or a package failed, or when it read no test at all, so a
// pipeline under `set -o pipefail` fails with the run.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type result struct {
	pkg, name string
	elapsed   float64
	action    string
}

func main() {
	verbose := flag.Bool("v", false, "write every test's output (as go test -v)")
	slowest := flag.Int("slowest", 20, "how many of the slowest top-level tests to list (0: none)")
	label := flag.String("label", "tests", "what the summary lines call this run")
	flag.Parse()

	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	pending := map[string][]string{} // package+test -> output held until the verdict
	var top []result
	subtests := map[string]int{}
	pkgFailed := false
	// A top-level test's time is its own run plus the runs of its
	// subtests that called t.Parallel: Go's elapsed time for a test leaves
	// out its parallel subtests (a test whose subtests all call t.Parallel
	// reports about 0 s) and, for a parallel test, the time it queued for
	// a slot. So the figure is comparable with the same test run alone.
	paused := map[string]bool{}
	parallelSubs := map[string]float64{} // package+top-level test -> seconds
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		line := in.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(out, "%s\n", line) // a build error or other text
			continue
		}
		key := ev.Package + "\x00" + ev.Test
		switch ev.Action {
		case "pause":
			paused[key] = true
		case "output":
			if *verbose || (ev.Test == "" && ev.Output != "PASS\n") {
				out.WriteString(ev.Output)
			} else {
				pending[key] = append(pending[key], ev.Output)
			}
		case "pass", "fail", "skip":
			if ev.Test == "" {
				if ev.Action == "fail" {
					pkgFailed = true
				}
				continue
			}
			if !*verbose {
				if ev.Action == "fail" {
					for _, o := range pending[key] {
						out.WriteString(o)
					}
				}
				delete(pending, key)
			}
			if top, _, sub := strings.Cut(ev.Test, "/"); sub {
				subtests[ev.Action]++
				if paused[key] {
					parallelSubs[ev.Package+"\x00"+top] += ev.Elapsed
				}
				continue
			}
			top = append(top, result{pkg: ev.Package, name: ev.Test, elapsed: ev.Elapsed + parallelSubs[key], action: ev.Action})
		}
		if ev.Action != "output" {
			out.Flush()
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(out, "testtimes: reading go test -json: %v\n", err)
		pkgFailed = true
	}

	count := map[string]int{}
	for _, r := range top {
		count[r.action]++
	}
	fmt.Fprintf(out, "== %s: %d top-level tests ran (%d passed, %d failed; %d skipped), %d subtests ran (%d passed, %d failed; %d skipped)\n",
		*label, count["pass"]+count["fail"], count["pass"], count["fail"], count["skip"],
		subtests["pass"]+subtests["fail"], subtests["pass"], subtests["fail"], subtests["skip"])
	if *slowest > 0 && len(top) > 0 {
		sort.SliceStable(top, func(i, j int) bool { return top[i].elapsed > top[j].elapsed })
		n := min(*slowest, len(top))
		fmt.Fprintf(out, "== %s: the %d slowest top-level tests (each its own run plus its parallel subtests' runs, queueing for a slot left out)\n", *label, n)
		multi := false
		for _, r := range top {
			multi = multi || r.pkg != top[0].pkg
		}
		for _, r := range top[:n] {
			name := r.name
			if multi {
				name = r.pkg + "." + r.name
			}
			fmt.Fprintf(out, "%8.2fs  %-4s  %s\n", r.elapsed, r.action, name)
		}
	}
	if pkgFailed || count["fail"] > 0 || subtests["fail"] > 0 {
		out.Flush()
		os.Exit(1)
	}
	if len(top) == 0 {
		fmt.Fprintf(out, "testtimes: %s: no test ran\n", *label)
		out.Flush()
		os.Exit(1)
	}
}
