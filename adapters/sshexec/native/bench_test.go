//go:build unix

package native_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
)

// BenchmarkStartLatency measures one session start (Prepare, Start and the
// initialize and session/new round trips through app.Start) and its Stop,
// on the reference agent behind the real sshd, for the ssh binary and the
// native transport: a first session (a new connection each time) and a
// session on a warm connection (another session holds it open).
func BenchmarkStartLatency(b *testing.B) {
	srv := sshtest.Start(b)
	agent := srv.Install(b, testbin.Path(b), "acpdrive")
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{agent, "agent"}
	cfg.Hosts = []string{srv.Alias}
	session := func(b *testing.B, l ports.Launcher) *app.Session {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := app.Start(ctx, app.Options{Settings: cfg, Workspace: srv.Workspace, Launcher: l, Clock: sysclock.Clock{}})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	stop := func(b *testing.B, s *app.Session) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	}
	nativeLauncher := func() *native.Launcher {
		return native.New(native.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile, AgentSocket: native.NoAgent})
	}

	b.Run("binary", func(b *testing.B) {
		l := sshexec.New(sshexec.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile})
		for b.Loop() {
			stop(b, session(b, l))
		}
	})
	b.Run("native-first", func(b *testing.B) {
		for b.Loop() {
			stop(b, session(b, nativeLauncher()))
		}
	})
	b.Run("native-warm", func(b *testing.B) {
		l := nativeLauncher()
		keeper := session(b, l)
		defer stop(b, keeper)
		for b.Loop() {
			stop(b, session(b, l))
		}
	})
}
