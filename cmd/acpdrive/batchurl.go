package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// batchTarget is where a task's runtime is reached: a URL and the
// variable holding its bearer token, or no URL for the batch's own hosts
// (this machine or its SSH hosts; docs/behaviour.md#network).
type batchTarget struct {
	url      string
	tokenEnv string
}

// batchTargetOf is the batch's target: --url and --token-env, else the
// configuration's agent.url and agent.token_env, as for run.
func batchTargetOf(f *runFlags, cfg domain.Config) batchTarget {
	t := batchTarget{url: f.session.url.url, tokenEnv: f.session.url.tokenEnv}
	if t.url == "" {
		t.url = cfg.URL
	}
	if t.tokenEnv == "" {
		t.tokenEnv = cfg.TokenEnv
	}
	return t
}

// batchFleets are a batch's fleets, one per target: the batch's own, made
// at the start, and one for each other URL a task's settings name, made
// when the first such task starts.
type batchFleets struct {
	flags  *runFlags
	cfg    domain.Config
	logger *slog.Logger
	// base holds the wiring's launcher, which starts a runtime on this
	// machine.
	base app.Options
	// template is the fleet options every fleet shares; Hosts is set per
	// target.
	template app.FleetOptions

	mu     sync.Mutex
	fleets map[batchTarget]*app.Fleet
	order  []*app.Fleet
}

// fleetFor returns the fleet of target, making it the first time.
func (b *batchFleets) fleetFor(target batchTarget) (*app.Fleet, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.fleets[target]; ok {
		return f, nil
	}
	opts := b.template
	opts.Hosts = b.hostsFor(target)
	f, err := app.NewFleet(opts)
	if err != nil {
		return nil, err
	}
	if b.fleets == nil {
		b.fleets = map[batchTarget]*app.Fleet{}
	}
	b.fleets[target] = f
	b.order = append(b.order, f)
	return f, nil
}

// hostsFor is target's one host, the runtime at its URL (named by the URL,
// as run names it), or the batch's hosts when it has no URL. A URL given
// with --command or SSH hosts, or one the dialer refuses, gives a host
// whose every start is refused with the reason (configuration_invalid).
func (b *batchFleets) hostsFor(target batchTarget) []app.FleetHost {
	if target.url == "" {
		return batchHosts(b.cfg, b.flags.sshTransport == "native", b.logger, b.base)
	}
	ns := wiring.NetworkSettings{URL: target.url, TokenEnv: target.tokenEnv, CAFile: b.flags.session.url.caFile}
	switch {
	case b.flags.set["command"]:
		ns.Refuse = configInvalid(errorString("--url and --command are exclusive: a runtime at a URL is not launched"))
	case b.cfg.Remote():
		ns.Refuse = configInvalid(errorString("--url and SSH hosts are exclusive: a runtime at a URL is not launched"))
	}
	return []app.FleetHost{{Name: target.url, Launcher: wiring.NewNetworkLauncher(b.logger, ns)}}
}

// all is every fleet made, in the order made.
func (b *batchFleets) all() []*app.Fleet {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.order)
}

// taskTarget is a task's target: the batch's, with the task's agent.url
// and agent.token_env over it when its settings set them. A task naming
// a command of its own while its runtime is at a URL is refused, as --url
// with --command is (configuration_invalid).
func (r *batchRunner) taskTarget(cfg domain.Config) (batchTarget, error) {
	t := r.target
	if cfg.URL != r.cfg.URL {
		t.url = cfg.URL
	}
	if cfg.TokenEnv != r.cfg.TokenEnv {
		t.tokenEnv = cfg.TokenEnv
	}
	if t.url != "" && cfg.URL == r.cfg.URL && !slices.Equal(cfg.Command, r.cfg.Command) {
		return t, configInvalid(errors.New("the task's agent.command and the batch's URL are exclusive: a runtime at a URL is not launched"))
	}
	return t, nil
}

// namesOwnURL reports whether a task's settings set agent.url and no
// command of their own.
func namesOwnURL(settings json.RawMessage) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(settings, &keys) != nil {
		return false
	}
	_, url := keys["url"]
	_, command := keys["command"]
	return url && !command
}
