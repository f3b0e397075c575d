// Command benchplot turns `go test -bench` output (the standard text
// format) into the SVG of docs/bench.svg: notifications per second of
// every client of BenchmarkStream, the per-session costs of
// BenchmarkIdleSessions against the session count, and the line sizes of
// BenchmarkLineSize. A chart whose benchmarks are absent from the input
// says so instead of failing. Values are the medians of every run of a
// benchmark in the input (go test -count).
//
//	benchplot -in results.txt -out ../docs/bench.svg
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	in := flag.String("in", "-", "go test -bench output to read (- for standard input)")
	out := flag.String("out", "-", "SVG file to write (- for standard output)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	var r io.Reader = os.Stdin
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	res, err := parse(r)
	if err != nil {
		return err
	}
	doc := render(res)
	if out == "-" {
		_, err = io.WriteString(os.Stdout, doc)
		return err
	}
	return os.WriteFile(out, []byte(doc), 0o644)
}
