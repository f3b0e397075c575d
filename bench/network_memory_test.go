//go:build linux

package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// BenchmarkNetworkIdleSessions holds N idle sessions at once, each on a
// connection of its own to one `acpdrive serve` on this machine (the
// small agent behind it, one process per connection), and reports what a
// session costs this process (live heap after GC, RSS, descriptors) and
// what a connection costs serve (its RSS, read from /proc; the runtime
// processes serve starts are not counted), with serve's OS threads with
// all N open (docs/behaviour.md#network). Run it with -benchtime=1x: one
// op starts, measures and stops N sessions.
func BenchmarkNetworkIdleSessions(b *testing.B) {
	for _, tr := range []struct{ name, listen, scheme string }{
		{"tcp", "tcp://127.0.0.1:0", ""},
		{"ws", "http://127.0.0.1:0", "ws"},
		{"http", "http://127.0.0.1:0", ""},
	} {
		for _, n := range []int{100, 500} {
			b.Run(fmt.Sprintf("%s/sessions=%d", tr.name, n), func(b *testing.B) {
				checkLimits(b, 2*n) // serve holds a connection and a runtime a session
				agent, err := smallAgent()
				if err != nil {
					b.Skip(err)
				}
				url, pid, stop := startServeOf(b, tr.listen, agent)
				defer stop()
				if tr.scheme != "" {
					_, rest, _ := strings.Cut(url, "://")
					url = tr.scheme + "://" + rest
				}
				launcher, err := netdial.New(netdial.Options{URL: url})
				if err != nil {
					b.Fatal(err)
				}
				ctx := scaleCtx(b)
				var heap, rss, fds, serveRSS, serveThreads, failures float64
				for b.Loop() {
					before, serveBefore := measureUsage(), pidStatus(pid, "VmRSS")
					sessions, failed := startNetworkMany(ctx, launcher, url, n)
					during, serveDuring := measureUsage(), pidStatus(pid, "VmRSS")
					live := float64(max(len(sessions), 1))
					heap += float64(int64(during.heap)-int64(before.heap)) / live
					rss += float64(during.rss-before.rss) / live
					fds += float64(during.fds-before.fds) / live
					serveRSS += float64(serveDuring-serveBefore) / live
					serveThreads += float64(pidStatus(pid, "Threads"))
					failures += float64(failed)
					if err := stopAll(ctx, sessions); err != nil {
						b.Errorf("stop: %v", err)
					}
				}
				k := float64(b.N)
				b.ReportMetric(heap/k, "heap-B/session")
				b.ReportMetric(rss/k, "rss-B/session")
				b.ReportMetric(fds/k, "fds/session")
				b.ReportMetric(serveRSS/k, "serve-rss-B/conn")
				b.ReportMetric(serveThreads/k, "serve-threads")
				b.ReportMetric(failures/k, "start-failures")
			})
		}
	}
}

// startNetworkMany starts n sessions on the runtime at url, startWorkers
// at a time, and returns those that started and how many did not (the
// first failure logged).
func startNetworkMany(ctx context.Context, l *netdial.Launcher, url string, n int) ([]*app.Session, int) {
	out := make([]*app.Session, n)
	errs := make([]error, n)
	next := make(chan int)
	done := make(chan struct{})
	for range min(startWorkers, n) {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range next {
				cfg := domain.DefaultSessionSettings()
				cfg.Command = []string{url}
				out[i], errs[i] = app.Start(ctx, app.Options{
					Settings: cfg, Workspace: workspace, Launcher: l, Clock: sysclock.Clock{},
				})
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	for range min(startWorkers, n) {
		<-done
	}
	var started []*app.Session
	failed := 0
	for i, s := range out {
		if errs[i] != nil {
			if failed == 0 {
				fmt.Fprintln(os.Stderr, "bench: a network start failed:", errs[i])
			}
			failed++
			continue
		}
		started = append(started, s)
	}
	return started, failed
}

// startServeOf starts `acpdrive serve --listen listen -- agent` and
// returns the URL it prints, its process id and the function that ends
// it (SIGTERM, then waited for).
func startServeOf(b *testing.B, listen, agent string) (string, int, func()) {
	b.Helper()
	cmd := exec.Command(agentBin, "serve", "--listen", listen, "--", agent)
	cmd.Dir = workspace
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("serve printed no URL: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid, func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
}

// pidStatus is one field of /proc/PID/status in its unit (kB as bytes);
// -1 when it cannot be read.
func pidStatus(pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			return -1
		}
		v, _ := strconv.ParseInt(f[0], 10, 64)
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		return v
	}
	return -1
}
