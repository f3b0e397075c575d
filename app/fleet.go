package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// DefaultHostDownFor is how long a Fleet leaves out a host found
// unreachable before it tries it again, when FleetOptions.DownFor is 0
// (docs/behaviour.md#fleet).
const DefaultHostDownFor = 5 * time.Minute

// MsgFleetNoHost is the message of a start refused because every host of
// the fleet is left out as unreachable (docs/behaviour.md#fleet).
const MsgFleetNoHost = "no host left to try: every host of the fleet was unreachable"

// MsgFleetFull is the message of a start refused because every host
// carries FleetOptions.MaxSessionsPerHost sessions.
const MsgFleetFull = "every host of the fleet carries its cap of sessions"

// MsgFleetClosed is the message of a start asked of a closed fleet.
const MsgFleetClosed = "the fleet is closed"

// ErrFleetFull is the cause of a start refused because every reachable
// host carries its cap of sessions; test for it with errors.Is.
const ErrFleetFull = Cause("every host of the fleet is full")

// FleetHost is one host a Fleet places sessions on: this machine
// (adapters/localexec, adapters/inprocess), an SSH host or pool
// (adapters/sshexec), or any other ports.Launcher — a runtime reached
// over the network is one more host of the same kind.
type FleetHost struct {
	// Name names the host in notices and Session.Host's absence; "" is
	// fine for this machine.
	Name string
	// Launcher starts the host's runtimes. Required.
	Launcher ports.Launcher
}

// FleetOptions configures a Fleet (docs/behaviour.md#fleet).
type FleetOptions struct {
	// Hosts are the hosts sessions are placed on, least-loaded first
	// (ties to the earlier). At least one.
	Hosts []FleetHost
	// MaxSessionsPerHost caps the sessions one host carries at once;
	// 0 means no cap. A start past every host's cap is refused
	// (ErrFleetFull).
	MaxSessionsPerHost int
	// SessionsPerProcess is how many sessions one runtime process
	// carries (a Host per host and process key); 0 or 1: a process per
	// session.
	SessionsPerProcess int
	// KeepWarm is how long a shared process with no session left is kept
	// for the next one (HostOptions.KeepWarm).
	KeepWarm time.Duration
	// DownFor is how long a host found unreachable is left out;
	// 0 means DefaultHostDownFor.
	DownFor time.Duration
	// Clock measures DownFor; nil means the system clock.
	Clock ports.Clock
	// Logger defaults to one that discards everything.
	Logger *slog.Logger
	// OnNotice, when set, is told what a person running the fleet should
	// know: a host left out, a runtime that cannot share a process; each
	// once.
	OnNotice func(FleetNotice)
}

// FleetNoticeKind says what a FleetNotice is about.
type FleetNoticeKind string

// Fleet notice kinds (docs/behaviour.md#fleet).
const (
	// NoticeHostDown: a host could not be reached and is left out for
	// FleetOptions.DownFor.
	NoticeHostDown FleetNoticeKind = "host_down"
	// NoticeCannotShare: a runtime cannot share a process
	// (ErrCannotShare); its sessions get a process each.
	NoticeCannotShare FleetNoticeKind = "cannot_share"
)

// FleetNotice is one thing a person running a fleet should know.
type FleetNotice struct {
	// Kind says what it is about.
	Kind FleetNoticeKind
	// Host is the host's FleetHost.Name.
	Host string
	// Command is the runtime's command (NoticeCannotShare).
	Command []string
	// DownFor is how long the host is left out (NoticeHostDown).
	DownFor time.Duration
	// Err is the failure that made it.
	Err error
}

// Text is the notice in one line.
func (n FleetNotice) Text() string {
	if n.Kind == NoticeHostDown {
		return fmt.Sprintf("host %s could not be reached; no session is placed there for %s: %s", n.Host, n.DownFor, errorText(n.Err))
	}
	return fmt.Sprintf("%s cannot share a process (%s): its sessions run on a process each", strings.Join(n.Command, " "), errorText(n.Err))
}

// Fleet places sessions over hosts and counts what they use
// (docs/behaviour.md#fleet): each session on the least-loaded host that
// is not left out as unreachable, on a process shared through a Host when
// FleetOptions.SessionsPerProcess asks for it and the runtime can share
// one (HostKey says which sessions may share), else on a process of its
// own. A session started through the fleet is stopped with its own Stop;
// its runtime, when a retry replaces it, is started again through the
// place that carried it. Totals sums every turn of every session placed,
// each attempt of a retried turn included. A Fleet is safe for concurrent
// use; Close stops every shared process.
type Fleet struct {
	opts  FleetOptions
	clock ports.Clock
	log   *slog.Logger

	mu     sync.Mutex
	hosts  []*fleetHost
	totals domain.Totals
	closed bool
}

// NewFleet returns a fleet over opts.Hosts; it starts nothing before the
// first Start.
func NewFleet(opts FleetOptions) (*Fleet, error) {
	if len(opts.Hosts) == 0 {
		return nil, &OptionsError{Field: "FleetOptions.Hosts", Reason: "needs at least one host"}
	}
	f := &Fleet{opts: opts, clock: opts.Clock, log: opts.Logger}
	if f.clock == nil {
		f.clock = systemClock{}
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.log = f.log.With("component", "acp_fleet")
	if f.opts.DownFor <= 0 {
		f.opts.DownFor = DefaultHostDownFor
	}
	for i, h := range opts.Hosts {
		if h.Launcher == nil {
			return nil, &OptionsError{Field: fmt.Sprintf("FleetOptions.Hosts[%d].Launcher", i), Reason: "is required"}
		}
		f.hosts = append(f.hosts, &fleetHost{FleetHost: h, shared: map[string]*Host{}, own: map[string]bool{}})
	}
	return f, nil
}

// Start places and starts one session with opts (its Launcher is the
// host's: leave it zero): on the least-loaded host not left out, the next
// one tried when a host cannot be reached (it is then left out for
// FleetOptions.DownFor). Errors are Start's and Host.Start's, or an
// agent_not_found one whose cause is ErrFleetFull or
// domain.ErrHostUnreachable when no host can take the session.
func (f *Fleet) Start(ctx context.Context, opts Options) (*Session, error) {
	var lastErr error
	for {
		h, err := f.pick()
		if err != nil {
			if lastErr != nil && errors.Is(err, domain.ErrHostUnreachable) {
				return nil, lastErr
			}
			return nil, err
		}
		o := opts
		o.Launcher = h.Launcher
		s, err := f.startOn(ctx, h, o)
		if err == nil {
			s.place = &fleetSeat{f: f, h: h}
			return s, nil
		}
		f.release(h)
		if len(f.hosts) == 1 || ctx.Err() != nil || !errors.Is(err, domain.ErrHostUnreachable) {
			return nil, err
		}
		f.leaveOut(h, err)
		lastErr = err
	}
}

// Totals returns the fleet's totals so far: every turn of every session
// it placed, each attempt of a retried turn included; usage per meaning
// over the measured turns, cost per currency
// (docs/behaviour.md#token-accounting).
func (f *Fleet) Totals() domain.Totals {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.totals.Clone()
}

// Close stops every shared process of the fleet, bounded by ctx; a later
// Start is refused. Sessions on processes of their own are their
// callers' to stop.
func (f *Fleet) Close(ctx context.Context) error {
	f.mu.Lock()
	f.closed = true
	var hosts []*Host
	for _, h := range f.hosts {
		for _, sh := range h.shared {
			hosts = append(hosts, sh)
		}
	}
	f.mu.Unlock()
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { errs[i] = h.Close(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fleetSeat is one session's place in a fleet: what it counts and gives
// back. Its methods do nothing on a nil seat (a session outside a fleet).
type fleetSeat struct {
	f    *Fleet
	h    *fleetHost
	once sync.Once
}

// count adds one turn to the fleet's totals.
func (st *fleetSeat) count(res domain.TurnResult) {
	if st == nil {
		return
	}
	st.f.mu.Lock()
	st.f.totals.Add(res)
	st.f.mu.Unlock()
}

// release gives the seat back, once.
func (st *fleetSeat) release() {
	if st == nil {
		return
	}
	st.once.Do(func() { st.f.release(st.h) })
}
