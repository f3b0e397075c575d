//go:build unix

// Package sshcontract is the SSH contract suite both SSH transports run
// (adapters/sshexec and adapters/sshexec/native): it drives app sessions
// through a launcher under test against the real sshd of
// internal/testsupport/sshtest.
package sshcontract

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
)

// ContractOptions is what a contract test asks of the launcher under test.
type ContractOptions struct {
	// Host is the destination (an alias of the server's ConfigFile).
	Host string
	// StrictHostKeyChecking is the host-key policy ("" = accept-new).
	StrictHostKeyChecking string
	// PassEnv names the variables to forward.
	PassEnv []string
	// Logger must receive every record the launcher logs.
	Logger *slog.Logger
	// TruncatePreamble asks the launcher to send its preamble short by
	// this many bytes and close stdin (a test hook of the transport).
	TruncatePreamble int
}

// SecretValue is the hostile value the preamble test forwards.
const SecretValue = "s3cr3t-'$(touch pwned)'-`id`-\"q\"\nline2"

// PoolFunc builds the pool under test over one launcher per host
// (sshexec.NewPool); the contract cannot import the adapter whose tests
// run it.
type PoolFunc func(hosts []string, launchers []ports.Launcher, perHostCap int) ports.Launcher

// RunContract drives app.Start, Turn and Stop through launchers built by
// newLauncher against a real sshd and checks the SSH contract of
// docs/behaviour.md#ssh.
func RunContract(t *testing.T, newLauncher func(t *testing.T, srv *sshtest.Server, opts ContractOptions) ports.Launcher, newPool PoolFunc) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	script := func(name, body string) string {
		p := filepath.Join(srv.BinDir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stubborn := script("stubborn.sh", "(trap '' TERM HUP; exec sleep 300) &\nexec "+agent+" agent --scenario stubborn")
	envDump := script("envdump.sh", "printf '%s' \"$ACPD_SECRET\" > "+srv.Workspace+"/secret.out\nexec "+agent+" agent")
	logged := script("logged.sh", "exec "+agent+" agent --log "+srv.Workspace+"/wire.log")

	start := func(t *testing.T, opts ContractOptions, command []string, mod func(*app.Options)) (*app.Session, error) {
		t.Helper()
		if opts.Host == "" {
			opts.Host = srv.Alias
		}
		cfg := domain.DefaultSessionSettings()
		cfg.Command = command
		cfg.Hosts = []string{opts.Host}
		o := app.Options{Settings: cfg, Workspace: srv.Workspace, Launcher: newLauncher(t, srv, opts), Clock: sysclock.Clock{}, Logger: opts.Logger}
		if mod != nil {
			mod(&o)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return app.Start(ctx, o)
	}
	stop := func(t *testing.T, s *app.Session) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	}
	noRemote := func(t *testing.T) {
		t.Helper()
		if left := srv.WaitNoRemoteProcs(t, 15*time.Second); len(left) > 0 {
			t.Fatalf("remote survivors: %v", left)
		}
	}
	noLocal := func(t *testing.T, pid int) {
		t.Helper()
		if pid <= 0 {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if data, err := os.ReadFile("/proc/" + itoa(pid) + "/stat"); err == nil && !bytes.Contains(data, []byte(") Z")) {
			t.Fatalf("local relay %d survived", pid)
		}
	}

	t.Run("full session of several turns", func(t *testing.T) {
		s, err := start(t, ContractOptions{}, []string{agent, "agent"}, nil)
		if err != nil {
			t.Fatalf("start: %v\nsshd: %s", err, srv.Log())
		}
		if id := s.Identity(); id.Host != srv.Alias {
			t.Errorf("identity host %q", id.Host)
		}
		for i := 0; i < 3; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r := s.Turn(ctx, "hello "+itoa(i))
			cancel()
			if r.Outcome != domain.OutcomeCompleted {
				t.Fatalf("turn %d: %v %s", i, r.Outcome, r.Message())
			}
		}
		pid := s.Identity().PID
		stop(t, s)
		noLocal(t, pid)
		noRemote(t)
	})

	// Two hosts with a cap of one session each: two sessions started at
	// once through the pool take one host each (each Prepare reserves its
	// host), and both run to a completed turn.
	t.Run("two hosts with a cap of one take one session each", func(t *testing.T) {
		pool := newPool([]string{srv.Alias, srv.SecondAlias}, []ports.Launcher{
			newLauncher(t, srv, ContractOptions{Host: srv.Alias}),
			newLauncher(t, srv, ContractOptions{Host: srv.SecondAlias}),
		}, 1)
		var wg sync.WaitGroup
		sessions := make([]*app.Session, 2)
		errs := make([]error, 2)
		for i := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sessions[i], errs[i] = start(t, ContractOptions{}, []string{agent, "agent"}, func(o *app.Options) {
					o.Launcher = pool
					o.Settings.Hosts = []string{srv.Alias, srv.SecondAlias}
				})
			}()
		}
		wg.Wait()
		hosts := map[string]int{}
		for i, s := range sessions {
			if errs[i] != nil {
				t.Fatalf("start %d: %v\nsshd: %s", i, errs[i], srv.Log())
			}
			hosts[s.Host()]++
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r := s.Turn(ctx, "hello")
			cancel()
			if r.Outcome != domain.OutcomeCompleted {
				t.Errorf("session %d: %v %s", i, r.Outcome, r.Message())
			}
		}
		for _, s := range sessions {
			stop(t, s)
		}
		if hosts[srv.Alias] != 1 || hosts[srv.SecondAlias] != 1 {
			t.Fatalf("sessions per host %v, want one on each", hosts)
		}
		noRemote(t)
	})

	// A host that cannot be reached is left for the next one the pool
	// offers, within the same app.Start.
	t.Run("an unreachable host fails over to the next", func(t *testing.T) {
		pool := newPool([]string{srv.DownAlias, srv.Alias}, []ports.Launcher{
			newLauncher(t, srv, ContractOptions{Host: srv.DownAlias}),
			newLauncher(t, srv, ContractOptions{Host: srv.Alias}),
		}, 0)
		s, err := start(t, ContractOptions{}, []string{agent, "agent"}, func(o *app.Options) {
			o.Launcher = pool
			o.Settings.Hosts = []string{srv.DownAlias, srv.Alias}
		})
		if err != nil {
			t.Fatalf("start: %v\nsshd: %s", err, srv.Log())
		}
		if s.Host() != srv.Alias {
			t.Errorf("session on %q, want %q", s.Host(), srv.Alias)
		}
		stop(t, s)
		noRemote(t)
	})

	t.Run("agent.command is a shell fragment on the remote side", func(t *testing.T) {
		// Two assignments, a variable expansion and exec: only a shell
		// reading the whole command runs this (both transports must).
		command := []string{"ACPD_A=1", "ACPD_B=$ACPD_A", "exec", agent, "agent"}
		s, err := start(t, ContractOptions{}, command, nil)
		if err != nil {
			t.Fatalf("start: %v\nsshd: %s", err, srv.Log())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := s.Turn(ctx, "hello")
		cancel()
		if r.Outcome != domain.OutcomeCompleted {
			t.Fatalf("turn: %v %s", r.Outcome, r.Message())
		}
		stop(t, s)
		noRemote(t)
	})

	t.Run("preamble delivers values on no argv and in no log", func(t *testing.T) {
		t.Setenv("ACPD_SECRET", SecretValue)
		var logs sshtest.SyncBuffer
		logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s, err := start(t, ContractOptions{PassEnv: []string{"ACPD_SECRET"}, Logger: logger}, []string{envDump}, nil)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		for pid, argv := range sshtest.Cmdlines() {
			if bytes.Contains(argv, []byte("s3cr3t")) {
				t.Errorf("the value is on the argv of %d: %q", pid, argv)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := s.Turn(ctx, "hi")
		cancel()
		if r.Outcome != domain.OutcomeCompleted {
			t.Errorf("turn: %s", r.Message())
		}
		stop(t, s)
		if got := srv.Exec(t, "cat "+srv.Workspace+"/secret.out"); got != SecretValue {
			t.Errorf("remote value %q, want %q", got, SecretValue)
		}
		if strings.Contains(logs.String(), "s3cr3t") {
			t.Errorf("the value was logged")
		}
		noRemote(t)
	})

	t.Run("truncated preamble fails the launch", func(t *testing.T) {
		t.Setenv("ACPD_SECRET", "x")
		_, err := start(t, ContractOptions{PassEnv: []string{"ACPD_SECRET"}, TruncatePreamble: 3}, []string{agent, "agent"}, nil)
		if !errors.Is(err, domain.KindPortExit) || !strings.Contains(err.Error(), "preamble truncated") {
			t.Fatalf("err = %v", err)
		}
		noRemote(t)
	})

	t.Run("changed host key is refused", func(t *testing.T) {
		defer srv.SetKnownHosts(t, srv.KnownHostsLine(srv.HostKey))
		other := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
		for _, strict := range []string{"accept-new", "yes"} {
			srv.SetKnownHosts(t, srv.KnownHostsLine(other))
			_, err := start(t, ContractOptions{StrictHostKeyChecking: strict}, []string{agent, "agent"}, nil)
			if !errors.Is(err, domain.KindPortExit) || !strings.Contains(err.Error(), "Host key verification failed") {
				t.Fatalf("%s: err = %v", strict, err)
			}
		}
	})

	t.Run("accept-new adds an unknown key", func(t *testing.T) {
		srv.SetKnownHosts(t, "")
		s, err := start(t, ContractOptions{StrictHostKeyChecking: "accept-new"}, []string{agent, "agent"}, nil)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		stop(t, s)
		data, _ := os.ReadFile(srv.KnownHosts)
		if !strings.Contains(string(data), strings.Fields(srv.HostKey)[1]) {
			t.Fatalf("known_hosts lacks the host key: %q", data)
		}
		noRemote(t)
	})

	t.Run("unreachable port is port_exit", func(t *testing.T) {
		_, err := start(t, ContractOptions{Host: srv.DownAlias}, []string{agent, "agent"}, nil)
		if !errors.Is(err, domain.KindPortExit) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("missing remote binary is the early exit report with 127", func(t *testing.T) {
		_, err := start(t, ContractOptions{}, []string{"acpdrive-no-such-binary", "--acp"}, nil)
		if !errors.Is(err, domain.KindPortExit) || !strings.Contains(err.Error(), "exit status 127") ||
			!strings.Contains(err.Error(), "acpdrive-no-such-binary") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("remote containment after Stop", func(t *testing.T) {
		s, err := start(t, ContractOptions{}, []string{stubborn}, nil)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		if len(srv.RemoteProcs(t)) < 2 {
			t.Fatalf("expected the runtime and its child remotely: %v", srv.RemoteProcs(t))
		}
		pid := s.Identity().PID
		_ = s.Stop(context.Background())
		noLocal(t, pid)
		noRemote(t)
	})

	t.Run("the remote group is gone when Stop returns", func(t *testing.T) {
		// The stubborn runtime ignores TERM, HUP and EOF and has a child
		// that ignores TERM and HUP: only the force step ends them. When
		// Stop returns, nothing of the remote group may run, unless Stop
		// reported it (docs/behaviour.md#ssh, #teardown).
		s, err := start(t, ContractOptions{}, []string{stubborn}, nil)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for !hasCmdline(srv.RemoteProcs(t), "sleep 300") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !hasCmdline(srv.RemoteProcs(t), "sleep 300") {
			t.Fatalf("the runtime's child never ran remotely: %v", srv.RemoteProcs(t))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = s.Stop(ctx)
		cancel()
		left := srv.RemoteProcs(t)
		var surv *domain.SurvivorsError
		switch {
		case errors.As(err, &surv):
			for _, sv := range surv.Survivors {
				if sv.Host != srv.Alias {
					t.Errorf("survivor %+v does not name the host %s", sv, srv.Alias)
				}
			}
		case err != nil:
			t.Errorf("stop: %v", err)
		case len(left) > 0:
			t.Errorf("Stop returned nil with the remote group still running: %v", left)
		}
		noRemote(t)
	})

	t.Run("remote containment after the connection is cut", func(t *testing.T) {
		s, err := start(t, ContractOptions{}, []string{stubborn}, nil)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		pid := s.Identity().PID
		if pid <= 0 {
			_ = s.Stop(context.Background())
			t.Skip("the transport has no local relay to cut")
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		noRemote(t)
		_ = s.Stop(context.Background())
	})

	t.Run("MCP configuration is not delivered", func(t *testing.T) {
		var once sync.Once
		s, err := start(t, ContractOptions{}, []string{logged}, func(o *app.Options) {
			o.Settings.MCPConfigPath = filepath.Join(srv.Dir, "mcp.json")
			o.MCPSource = failingSource{t: t, once: &once}
		})
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		if st := s.Capabilities().State(domain.CapToolServers); st != domain.CapGap {
			t.Errorf("tool servers = %q, want gap", st)
		}
		stop(t, s)
		wire := srv.Exec(t, "cat "+srv.Workspace+"/wire.log")
		if !strings.Contains(wire, `"mcpServers":[]`) {
			t.Errorf("session/new did not carry mcpServers: []:\n%s", wire)
		}
		noRemote(t)
	})

	runSandbox(t, srv, agent, start, stop, noRemote)
}

type failingSource struct {
	t    *testing.T
	once *sync.Once
}

func (f failingSource) Load(context.Context, string) ([]domain.MCPServer, error) {
	f.once.Do(func() { f.t.Error("a remote launch read the MCP configuration") })
	return nil, errors.New("not for a remote launch")
}

func itoa(i int) string { return strconv.Itoa(i) }

// hasCmdline reports whether a process's command line contains s.
func hasCmdline(procs []sshtest.Proc, s string) bool {
	for _, p := range procs {
		if strings.Contains(p.Cmdline, s) {
			return true
		}
	}
	return false
}
