package bench

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// BenchmarkNetworkBurst is the notification burst of BenchmarkNotifications
// (trivial handler, acpdrive only) over each transport of
// docs/behaviour.md#network side by side: stdio (the runtime launched
// locally) and, through `acpdrive serve` on this machine, tcp and unix
// (newline-delimited JSON-RPC), ws (one message per WebSocket frame) and
// http (Streamable HTTP: the burst on the connection's event stream).
// One op is one turn of -burst notifications on a fresh connection (and
// so a fresh runtime process); the connection, the handshake and the
// teardown are outside the timer. notifs/s is as in
// BenchmarkNotifications.
func BenchmarkNetworkBurst(b *testing.B) {
	b.Run("stdio", func(b *testing.B) { benchNet(b, startAcpdrive(false)) })
	dir, err := os.MkdirTemp("", "nb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, tr := range []struct{ name, listen string }{
		{"tcp", "tcp://127.0.0.1:0"},
		{"unix", "unix:" + filepath.Join(dir, "acp.sock")},
		{"ws", "http://127.0.0.1:0"},
		{"http", "http://127.0.0.1:0"},
	} {
		b.Run(tr.name, func(b *testing.B) {
			url, stop := startServe(b, tr.listen)
			defer stop()
			if tr.name == "ws" {
				url = "ws" + strings.TrimPrefix(url, "http") // the WebSocket at the same address
			}
			benchNet(b, startNetwork(url))
		})
	}
}

// startServe starts `acpdrive serve` wrapping the reference agent and
// returns the URL it prints and the function that ends it.
func startServe(b *testing.B, listen string) (string, func()) {
	b.Helper()
	cmd := exec.Command(agentBin, "serve", "--listen", listen, "--", agentBin, "agent")
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
	return strings.TrimSpace(line), func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
}

// startNetwork is the acpdrive starter for a runtime at url.
func startNetwork(url string) starter {
	return func(ctx context.Context, s *sink) (burstClient, error) {
		l, err := netdial.New(netdial.Options{URL: url})
		if err != nil {
			return nil, err
		}
		c := &acpdriveClient{}
		cfg := domain.DefaultSessionSettings()
		cfg.Command = []string{url}
		sess, err := app.Start(ctx, app.Options{
			Settings: cfg, Workspace: workspace, Launcher: l, Clock: sysclock.Clock{},
			OnEvent: func(ev domain.Event) {
				if ev.Type == domain.EventTurnCompleted {
					c.completed.Store(true)
				}
			},
			OnAgentText: func(_, text string) { s.chunk(text) },
		})
		if err != nil {
			return nil, err
		}
		c.sess = sess
		return c, nil
	}
}

// benchNet runs -burst notifications per op through start.
func benchNet(b *testing.B, start starter) {
	n := *burstFlag
	prompt := burstPrompt(n)
	ctx := context.Background()
	var received, lost atomic.Int64
	var busy time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := newSink(costTrivial)
		c, err := start(ctx, s)
		if err != nil {
			b.Fatalf("start: %v", err)
		}
		b.StartTimer()
		rep := c.turn(ctx, prompt)
		b.StopTimer()
		if rep.err != nil {
			b.Fatalf("turn: %v", rep.err)
		}
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := c.stop(stopCtx); err != nil {
			b.Logf("stop: %v", err)
		}
		cancel()
		received.Add(s.received())
		lost.Add(int64(n) - s.received())
		busy += rep.elapsed
	}
	if busy > 0 {
		b.ReportMetric(float64(received.Load())/busy.Seconds(), "notifs/s")
	}
	b.ReportMetric(float64(lost.Load())/float64(b.N), "lost/op")
}
