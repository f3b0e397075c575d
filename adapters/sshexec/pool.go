package sshexec

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// HostLauncher is a launcher bound to one host.
type HostLauncher struct {
	// Host names the host (for the pool's choice and its errors).
	Host string
	// Launcher launches on it (the ssh binary or the native transport).
	Launcher ports.Launcher
}

// Pool hands a new session the host with the fewest sessions running
// from this process, within an optional per-host cap. It implements
// ports.Launcher; a session's slot is taken when its Plan starts and
// given back when its Process is released (or the start fails).
type Pool struct {
	hosts []HostLauncher
	cap   int

	mu      sync.Mutex
	running map[string]int
}

var _ ports.Launcher = (*Pool)(nil)

// NewPool returns a pool over hosts, in order (ties go to the earlier
// host). perHostCap <= 0 means no cap.
func NewPool(hosts []HostLauncher, perHostCap int) *Pool {
	return &Pool{hosts: append([]HostLauncher(nil), hosts...), cap: perHostCap, running: map[string]int{}}
}

// Running reports how many sessions run on host from this pool.
func (p *Pool) Running(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running[host]
}

// Prepare picks the least-loaded host with room and prepares on it. A
// pool with no room is a port_exit error.
func (p *Pool) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p.mu.Lock()
	best, avoided := -1, 0
	for i, h := range p.hosts {
		n := p.running[h.Host]
		if slices.Contains(req.Avoid, h.Host) {
			avoided++ // could not be reached earlier in this start
			continue
		}
		if p.cap > 0 && n >= p.cap {
			continue
		}
		if best < 0 || n < p.running[p.hosts[best].Host] {
			best = i
		}
	}
	p.mu.Unlock()
	if best < 0 && avoided == len(p.hosts) {
		return nil, domain.WrapError(domain.KindPortExit, "no SSH host left to try: every host was unreachable", domain.ErrHostUnreachable)
	}
	if best < 0 {
		return nil, domain.NewError(domain.KindPortExit,
			fmt.Sprintf("every SSH host is full: %d hosts, at most %d sessions each", len(p.hosts), p.cap))
	}
	h := p.hosts[best]
	inner, err := h.Launcher.Prepare(req)
	if err != nil {
		return nil, err
	}
	return &poolPlan{pool: p, host: h.Host, inner: inner}, nil
}

func (p *Pool) take(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cap > 0 && p.running[host] >= p.cap {
		return false
	}
	p.running[host]++
	return true
}

func (p *Pool) give(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[host] > 0 {
		p.running[host]--
	}
}

type poolPlan struct {
	pool  *Pool
	host  string
	inner ports.Plan
}

func (pp *poolPlan) Target() ports.Target { return pp.inner.Target() }

func (pp *poolPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	if !pp.pool.take(pp.host) {
		return nil, domain.NewError(domain.KindPortExit,
			fmt.Sprintf("SSH host %s is full: at most %d sessions", pp.host, pp.pool.cap))
	}
	proc, err := pp.inner.Start(ctx, env)
	if err != nil {
		pp.pool.give(pp.host)
		return nil, err
	}
	return &poolProcess{Process: proc, release: func() { pp.pool.give(pp.host) }}, nil
}

type poolProcess struct {
	ports.Process
	once    sync.Once
	release func()
}

func (pp *poolProcess) Release() error {
	err := pp.Process.Release()
	pp.once.Do(pp.release)
	return err
}
