package app

import (
	"context"
	"errors"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// fleetHost is one host of a fleet and what runs there. Guarded by
// Fleet.mu.
type fleetHost struct {
	FleetHost
	load      int              // sessions placed or being started
	downUntil time.Time        // left out until then (unreachable)
	shared    map[string]*Host // by HostKey
	own       map[string]bool  // HostKeys whose runtime cannot share a process
}

// pick reserves a seat on the least-loaded host that is not left out and
// has room (ties to the earlier host).
func (f *Fleet) pick() (*fleetHost, error) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, domain.NewError(domain.KindAgentNotFound, MsgFleetClosed).WithReason(domain.ReasonNotOffered)
	}
	var best *fleetHost
	reachable := false
	for _, h := range f.hosts {
		if now.Before(h.downUntil) {
			continue
		}
		reachable = true
		if f.opts.MaxSessionsPerHost > 0 && h.load >= f.opts.MaxSessionsPerHost {
			continue
		}
		if best == nil || h.load < best.load {
			best = h
		}
	}
	switch {
	case !reachable:
		return nil, domain.WrapError(domain.KindPortExit, MsgFleetNoHost, domain.ErrHostUnreachable)
	case best == nil:
		return nil, domain.WrapError(domain.KindAgentNotFound, MsgFleetFull, ErrFleetFull).WithReason(domain.ReasonNotOffered)
	}
	best.load++
	return best, nil
}

// release gives back a seat on h.
func (f *Fleet) release(h *fleetHost) {
	f.mu.Lock()
	if h.load > 0 {
		h.load--
	}
	f.mu.Unlock()
}

// leaveOut leaves h out for FleetOptions.DownFor: it could not be
// reached.
func (f *Fleet) leaveOut(h *fleetHost, err error) {
	f.mu.Lock()
	first := !f.clock.Now().Before(h.downUntil)
	h.downUntil = f.clock.Now().Add(f.opts.DownFor)
	f.mu.Unlock()
	f.log.Warn("host unreachable; left out", "host", h.Name, "down_for", f.opts.DownFor, "error", err)
	if first {
		f.notice(FleetNotice{Kind: NoticeHostDown, Host: h.Name, DownFor: f.opts.DownFor, Err: err})
	}
}

// notice tells FleetOptions.OnNotice.
func (f *Fleet) notice(n FleetNotice) {
	if f.opts.OnNotice != nil {
		f.opts.OnNotice(n)
	}
}

// startOn starts the session on h: on a shared process when the fleet
// shares them and the runtime can share one, else on a process of its
// own (docs/behaviour.md#fleet).
func (f *Fleet) startOn(ctx context.Context, h *fleetHost, o Options) (*Session, error) {
	if f.opts.SessionsPerProcess <= 1 || o.Settings.Subagents || o.VerifyCredential {
		return Start(ctx, o)
	}
	key := HostKey(o)
	host, own, err := f.hostFor(h, key, o)
	if err != nil {
		return nil, err
	}
	if own {
		return Start(ctx, o)
	}
	s, err := host.Start(ctx, o)
	if err != nil && errors.Is(err, ErrCannotShare) {
		f.mu.Lock()
		first := !h.own[key]
		h.own[key] = true
		f.mu.Unlock()
		if first {
			f.notice(FleetNotice{Kind: NoticeCannotShare, Host: h.Name, Command: o.Settings.Command, Err: err})
		}
		return Start(ctx, o)
	}
	return s, err
}

// hostFor is the Host of key on h, made on first use from o's process
// options; own reports a key whose runtime cannot share a process.
func (f *Fleet) hostFor(h *fleetHost, key string, o Options) (*Host, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.own[key] {
		return nil, true, nil
	}
	if sh := h.shared[key]; sh != nil {
		return sh, false, nil
	}
	ho := hostOptions(o, o)
	// The session's own part is the session's, never the process's.
	ho.OnEvent, ho.Observers, ho.OnAgentText, ho.OnToolStart, ho.OnReadIdle = nil, nil, nil, nil, nil
	ho.ResumeSessionID, ho.ForkSessionID = "", ""
	sh, err := NewHost(ho, HostOptions{SessionsPerProcess: f.opts.SessionsPerProcess, KeepWarm: f.opts.KeepWarm})
	if err != nil {
		return nil, false, err
	}
	h.shared[key] = sh
	return sh, false, nil
}

// errorText is an error's message: an AgentError's own, else the
// error's.
func errorText(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
