package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

// placer places a batch's sessions (docs/behaviour.md#batch): on the SSH
// host with the fewest of the batch's sessions running that was not found
// unreachable (ties to the earlier host; one launcher per host, shared by
// every session placed there), and, with --sessions-per-process above 1,
// on a shared process of an app.Host kept per launch configuration and
// host. A task whose runtime cannot share a process (no session/close, or
// subagents followed) gets a process of its own.
type placer struct {
	perProcess int
	keepWarm   time.Duration
	base       app.Options // the flags' options: what a shared process is started with
	hosts      []string    // the SSH hosts in order; [""] for a local batch
	launchers  map[string]ports.Launcher
	warn       func(string)

	mu     sync.Mutex
	load   map[string]int          // the batch's sessions per host, placed or running
	down   map[string]bool         // hosts found unreachable: nothing more is placed there
	shared map[string]*app.Host    // by launch key
	own    map[string]bool         // launch keys whose runtime cannot share a process
	of     map[*app.Session]string // each running session's host
}

func newPlacer(cfg domain.Config, native bool, logger *slog.Logger, base app.Options, perProcess int, keepWarm time.Duration, warn func(string)) *placer {
	p := &placer{
		perProcess: perProcess, keepWarm: keepWarm, base: base, warn: warn,
		launchers: map[string]ports.Launcher{}, load: map[string]int{}, down: map[string]bool{},
		shared: map[string]*app.Host{}, own: map[string]bool{}, of: map[*app.Session]string{},
	}
	if !cfg.Remote() {
		p.hosts = []string{""}
		p.launchers[""] = base.Launcher
		return p
	}
	for _, h := range cfg.SSHHosts {
		if _, dup := p.launchers[h]; dup {
			continue
		}
		p.hosts = append(p.hosts, h)
		p.launchers[h] = wiring.NewSSHLauncher(logger, wiring.SSHSettings{
			Host: h, StrictHostKeyChecking: cfg.SSHStrictHostKeyChecking,
			ConfigFile: cfg.SSHConfig, PassEnv: cfg.SSHPassEnv, Native: native,
		})
	}
	return p
}

// start places and starts one session with opts; a host that cannot be
// reached is marked down and the next one tried.
func (p *placer) start(ctx context.Context, opts app.Options) (*app.Session, error) {
	var lastErr error
	for {
		host, ok := p.pick()
		if !ok {
			if lastErr == nil {
				lastErr = domain.WrapError(domain.KindPortExit, "no SSH host left to try: every host was unreachable", domain.ErrHostUnreachable)
			}
			return nil, lastErr
		}
		o := opts
		o.Launcher = p.launchers[host]
		sess, err := p.startOn(ctx, host, o)
		if err == nil {
			p.mu.Lock()
			p.of[sess] = host
			p.mu.Unlock()
			return sess, nil
		}
		p.release(host)
		if host == "" || ctx.Err() != nil || !errors.Is(err, domain.ErrHostUnreachable) {
			return nil, err
		}
		p.mu.Lock()
		first := !p.down[host]
		p.down[host] = true
		p.mu.Unlock()
		if first {
			p.warn(fmt.Sprintf("SSH host %s could not be reached; no further task is placed there: %s", host, failureText(err)))
		}
		lastErr = err
	}
}

// pick reserves a place on the least-loaded host not found unreachable.
func (p *placer) pick() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, found := "", false
	for _, h := range p.hosts {
		if p.down[h] {
			continue
		}
		if !found || p.load[h] < p.load[best] {
			best, found = h, true
		}
	}
	if found {
		p.load[best]++
	}
	return best, found
}

// release gives back a place on host.
func (p *placer) release(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.load[host] > 0 {
		p.load[host]--
	}
}

// startOn starts the session on host: on a shared process when the batch
// shares them and the task's runtime can share one, else on a process of
// its own.
func (p *placer) startOn(ctx context.Context, host string, o app.Options) (*app.Session, error) {
	if p.perProcess <= 1 || o.Settings.Subagents {
		return app.Start(ctx, o)
	}
	key := launchKey(host, o)
	p.mu.Lock()
	own := p.own[key]
	p.mu.Unlock()
	if own {
		return app.Start(ctx, o)
	}
	h, err := p.hostFor(key, o)
	if err != nil {
		return nil, err
	}
	sess, err := h.Start(ctx, o)
	var ae *domain.AgentError
	if err != nil && errors.As(err, &ae) && ae.Message == app.MsgHostNeedsClose {
		p.mu.Lock()
		first := !p.own[key]
		p.own[key] = true
		p.mu.Unlock()
		if first {
			p.warn(fmt.Sprintf("%s does not advertise session/close: its tasks run on a process each", strings.Join(o.Settings.Command, " ")))
		}
		return app.Start(ctx, o)
	}
	return sess, err
}

// launchKey names what a shared process is started with: the host, the
// command, the protocol and the sandbox (with, under a sandbox, the
// workspace and the additional directories it makes writable). Tasks of
// one key share processes; tasks of different keys never do.
func launchKey(host string, o app.Options) string {
	k := struct {
		Host     string
		Command  []string
		Protocol domain.ProtocolChoice
		Sandbox  domain.Sandbox
		Dir      string
		AddDirs  []string
	}{Host: host, Command: o.Settings.Command, Protocol: o.Settings.Protocol, Sandbox: o.Settings.Sandbox}
	if o.Settings.Sandbox.Enabled {
		k.Dir, k.AddDirs = o.Workspace, o.Settings.Session.AdditionalDirectories
	}
	b, _ := json.Marshal(k)
	return string(b)
}

// hostFor returns the host of key, made on first use: the flags' options
// (bounds, stop grace, working directory) with the task's command,
// protocol and sandbox, on the launcher of the task's SSH host.
func (p *placer) hostFor(key string, o app.Options) (*app.Host, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h := p.shared[key]; h != nil {
		return h, nil
	}
	ho := p.base
	ho.Launcher = o.Launcher
	ho.Settings.Command = o.Settings.Command
	ho.Settings.Protocol = o.Settings.Protocol
	ho.Settings.Sandbox = o.Settings.Sandbox
	ho.Settings.Session.AdditionalDirectories = nil
	if o.Settings.Sandbox.Enabled {
		ho.Workspace = o.Workspace
		ho.Settings.Session.AdditionalDirectories = o.Settings.Session.AdditionalDirectories
	}
	h, err := app.NewHost(ho, app.HostOptions{SessionsPerProcess: p.perProcess, KeepWarm: p.keepWarm})
	if err != nil {
		return nil, err
	}
	p.shared[key] = h
	return h, nil
}

// launcherOf is the launcher of the host sess runs on, for a resume on a
// process of its own (app.Retrier).
func (p *placer) launcherOf(sess *app.Session, opts app.Options) ports.Launcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.launchers[p.of[sess]]; ok {
		return l
	}
	return opts.Launcher
}

// moved records that next runs in place of prev (a resumed session).
func (p *placer) moved(prev, next *app.Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if host, ok := p.of[prev]; ok {
		delete(p.of, prev)
		p.of[next] = host
	}
}

// done gives back the place of a session that stopped.
func (p *placer) done(sess *app.Session) {
	p.mu.Lock()
	host, ok := p.of[sess]
	delete(p.of, sess)
	p.mu.Unlock()
	if ok {
		p.release(host)
	}
}

// close stops every shared process, bounded by ctx.
func (p *placer) close(ctx context.Context) error {
	p.mu.Lock()
	hosts := make([]*app.Host, 0, len(p.shared))
	for _, h := range p.shared {
		hosts = append(hosts, h)
	}
	p.mu.Unlock()
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { errs[i] = h.Close(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
