package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/acpdrive/acpdrive/bench
BenchmarkStream/client=library-2         	       3	 540256995 ns/op	      2000 cpu-ns/notif	         0 lost/op	    300000 notifs/s
BenchmarkStream/client=library-2         	       3	 407572917 ns/op	      3000 cpu-ns/notif	         0 lost/op	    100000 notifs/s
BenchmarkStream/client=library-2         	       3	 682929414 ns/op	      2500 cpu-ns/notif	         0 lost/op	    250000 notifs/s
BenchmarkStream/client=go-sdk-2          	       3	1850358831 ns/op	     16042 cpu-ns/notif	         0 lost/op	     54626 notifs/s
BenchmarkStream/client=floor-2           	       3	 564967706 ns/op	      4385 cpu-ns/notif	         0 lost/op	    184567 notifs/s
--- BENCH: BenchmarkStream/client=floor-2
    stream_test.go:1: a log line
BenchmarkIdleSessions/sessions=1000-2    	       1	 1 ns/op	 50000 heap-B/session	 90000 rss-B/session	 12 threads	 3.0 fds/session	 0 start-failures
BenchmarkIdleSessions/sessions=1-2       	       1	 1 ns/op	 60000 heap-B/session	 99000 rss-B/session	 9 threads	 3.0 fds/session	 0 start-failures
BenchmarkLineSize/bytes=100-2         	 1000000	      1070 ns/op	  93.50 MB/s	        10.70 ns/B	         0.2113 x-floor	      56 B/op	       3 allocs/op
BenchmarkLineSize/bytes=10000000-2    	      18	  57655728 ns/op	 173.44 MB/s	         5.765 ns/B	         0.2845 x-floor	25160021 B/op	      44 allocs/op
PASS
ok  	github.com/acpdrive/acpdrive/bench	45.230s
`

func TestParseMedians(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.median("BenchmarkStream/client=library", "notifs/s"); !ok || v != 250000 {
		t.Errorf("library notifs/s median = %v, %v; want 250000", v, ok)
	}
	if v, ok := r.median("BenchmarkIdleSessions/sessions=1", "threads"); !ok || v != 9 {
		t.Errorf("threads = %v, %v; want 9", v, ok)
	}
	if _, ok := r.median("BenchmarkStream/client=cli-json", "notifs/s"); ok {
		t.Error("a median for a benchmark that is not in the input")
	}
	counts := r.sub("BenchmarkIdleSessions", "sessions")
	numericSort(counts)
	if strings.Join(counts, ",") != "1,1000" {
		t.Errorf("session counts = %v", counts)
	}
}

func TestRender(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	doc := render(r)
	if err := xml.Unmarshal([]byte(doc), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	for _, want := range []string{">library<", ">go-sdk<", ">floor<", "250k notifs/s", "2500 CPU ns/notif",
		"heap bytes per session", ">50k<", ">1000<", "library ns per byte", ">10M<"} {
		if !strings.Contains(doc, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(doc, "no BenchmarkIdleSessions results") {
		t.Error("says the session results are absent")
	}
	// Library before go-sdk before floor, whatever the input order.
	if i, j, k := strings.Index(doc, ">library<"), strings.Index(doc, ">go-sdk<"), strings.Index(doc, ">floor<"); !(i < j && j < k) {
		t.Errorf("clients out of order: %d %d %d", i, j, k)
	}
}

func TestRenderWithoutSessions(t *testing.T) {
	r, err := parse(strings.NewReader(sample[:strings.Index(sample, "BenchmarkIdleSessions")]))
	if err != nil {
		t.Fatal(err)
	}
	doc := render(r)
	if !strings.Contains(doc, "no BenchmarkIdleSessions results") {
		t.Error("does not say the session results are absent")
	}
	if err := xml.Unmarshal([]byte(doc), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
}

func TestRunWritesTheFile(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "results.txt"), filepath.Join(dir, "bench.svg")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<svg ") {
		t.Errorf("output starts %q", b[:min(len(b), 20)])
	}
}
