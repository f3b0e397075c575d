package sshexec

import (
	"context"
	"fmt"
	"runtime"
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

// Pool hands a new session the host with the fewest sessions running or
// reserved from this process, within an optional per-host cap. It
// implements ports.Launcher for either transport.
//
// A session's slot is reserved when Prepare picks its host, so plans
// prepared before any of them starts spread over the hosts. The
// reservation becomes the started session's slot at the plan's first
// Start and is given back when its Process is released. It is given back
// without a session when that Start fails, when the plan's Discard is
// called (the plans implement ports.Discarder), or, for a plan that
// is dropped without either, when the garbage collector finds the plan
// unreachable. A later Start of the same plan takes a fresh slot, or fails
// port_exit when the host is full.
type Pool struct {
	hosts []HostLauncher
	cap   int

	mu      sync.Mutex
	running map[string]int // sessions started or reserved, per host
}

var (
	_ ports.Launcher  = (*Pool)(nil)
	_ ports.Discarder = (*poolPlan)(nil)
)

// NewPool returns a pool over hosts, in order (ties go to the earlier
// host). perHostCap <= 0 means no cap.
func NewPool(hosts []HostLauncher, perHostCap int) *Pool {
	return &Pool{hosts: append([]HostLauncher(nil), hosts...), cap: perHostCap, running: map[string]int{}}
}

// Running reports how many sessions run on host from this pool, counting
// the slots reserved by plans not yet started.
func (p *Pool) Running(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running[host]
}

// Prepare picks the least-loaded host with room, reserves a slot on it and
// prepares on it. A pool with no room is a port_exit error; a failed
// prepare gives the slot back.
func (p *Pool) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	h, ok, avoided := p.reserve(req.Avoid)
	if !ok && avoided {
		return nil, domain.WrapError(domain.KindPortExit, "no SSH host left to try: every host was unreachable", domain.ErrHostUnreachable)
	}
	if !ok {
		return nil, domain.NewError(domain.KindPortExit,
			fmt.Sprintf("every SSH host is full: %d hosts, at most %d sessions each", len(p.hosts), p.cap))
	}
	r := &reservation{pool: p, host: h.Host, held: true}
	inner, err := h.Launcher.Prepare(req)
	if err != nil {
		r.discard()
		return nil, err
	}
	pp := &poolPlan{res: r, inner: inner}
	// A plan dropped without Start or Discard gives its slot back once
	// it is unreachable; the cleanup holds the reservation, not the plan.
	runtime.AddCleanup(pp, (*reservation).discard, r)
	return pp, nil
}

// reserve takes a slot on the least-loaded host with room, none of
// avoid (hosts that could not be reached earlier in the same start);
// allAvoided reports that every host was in avoid.
func (p *Pool) reserve(avoid []string) (h HostLauncher, ok, allAvoided bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, avoided := -1, 0
	for i, h := range p.hosts {
		n := p.running[h.Host]
		if slices.Contains(avoid, h.Host) {
			avoided++
			continue
		}
		if p.cap > 0 && n >= p.cap {
			continue
		}
		if best < 0 || n < p.running[p.hosts[best].Host] {
			best = i
		}
	}
	if best < 0 {
		return HostLauncher{}, false, avoided == len(p.hosts)
	}
	p.running[p.hosts[best].Host]++
	return p.hosts[best], true, false
}

// reservation is the slot a plan holds between Prepare and its first
// Start. Its state is guarded by the pool's mutex.
type reservation struct {
	pool *Pool
	host string
	held bool // the slot is the plan's, not yet a session's
}

// take returns a slot for a Start: the plan's reservation when it still
// holds one, else a fresh slot within the cap.
func (r *reservation) take() bool {
	p := r.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.held {
		r.held = false
		return true
	}
	if p.cap > 0 && p.running[r.host] >= p.cap {
		return false
	}
	p.running[r.host]++
	return true
}

// discard gives an unused reservation back; it does nothing once the
// slot has become a session's.
func (r *reservation) discard() {
	p := r.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.held {
		r.held = false
		p.dec(r.host)
	}
}

// give returns one slot of host.
func (p *Pool) give(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dec(host)
}

// dec returns one slot of host; the caller holds the mutex.
func (p *Pool) dec(host string) {
	if p.running[host] > 0 {
		p.running[host]--
	}
}

type poolPlan struct {
	res   *reservation
	inner ports.Plan
}

func (pp *poolPlan) Target() ports.Target { return pp.inner.Target() }

// Start starts the session in the plan's slot (see Pool).
func (pp *poolPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	pool, host := pp.res.pool, pp.res.host
	if !pp.res.take() {
		return nil, domain.NewError(domain.KindPortExit,
			fmt.Sprintf("SSH host %s is full: at most %d sessions", host, pool.cap))
	}
	proc, err := pp.inner.Start(ctx, env)
	if err != nil {
		pool.give(host)
		return nil, err
	}
	return &poolProcess{Process: proc, release: func() { pool.give(host) }}, nil
}

// Discard gives back the slot of a plan that will not be started; it does
// nothing once the plan has started.
func (pp *poolPlan) Discard() { pp.res.discard() }

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
