package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// meter consumes the measurement sources (docs/behaviour.md#token-accounting):
// the first source that claims a local launch is armed before the start,
// kept only when the handshake names its runtime, asked for each turn's
// figures within the turn's read budget, dropped when it answers nothing
// before any turn had a figure, and released at session end.
type meter struct {
	sources []ports.MeasurementSource
	log     *slog.Logger
	// plan is how this start chooses a source: by claim (the first
	// start), or as the previous start's handshake settled it.
	plan measurePlan

	mu       sync.Mutex
	source   ports.MeasurementSource
	m        ports.Measurement
	env      []string // what the armed measurement added to the runtime's environment
	measured bool     // some turn had a figure
}

// measurePlan says which source a start arms.
type measurePlan struct {
	settled bool                    // false: the first start, by claim
	source  ports.MeasurementSource // when settled: the source to arm, nil for none
}

// Restart texts (docs/behaviour.md#token-accounting).
const (
	msgRelaunchWithout = "agent relaunched without usage settings meant for another runtime"
	msgRelaunchWith    = "agent relaunched so its token usage can be measured: agent.command does not name the runtime it starts"
)

// incompleteTurnWait bounds the wait for the figures of a turn that did not
// complete (cancelled, timed out, refused…): it may never have finished a
// model call, so the runtime may write nothing, and the run must not wait
// the whole read budget for it (docs/behaviour.md#token-accounting).
const incompleteTurnWait = time.Second

// maxStarts bounds the starts of one session start: the first and at most
// two restarts to settle the measurement source.
const maxStarts = 3

func newMeter(sources []ports.MeasurementSource, log *slog.Logger) *meter {
	return &meter{sources: sources, log: log}
}

// settlement is what the handshake decides for the measurement: start
// the runtime again with next (restart, for why), or go on, with the
// armed source dropped when the handshake named another runtime.
type settlement struct {
	restart bool
	next    measurePlan
	why     string
	dropped bool
	armed   bool // a source was armed in place: token counts is ours
}

// handshake settles the measurement with the runtime the handshake named;
// mayRestart says whether another start is allowed. A restart happens only
// when the running process really lacks (or carries) settings: when
// neither the armed source nor the one the handshake names adds anything
// to the environment, the named source is armed in place instead.
func (mt *meter) handshake(ctx context.Context, agentName string, target ports.Target, mayRestart bool) settlement {
	next, why, again := mt.settle(agentName, target)
	if again {
		was := mt.armed()
		if mt.switchInPlace(ctx, next.source) {
			now := mt.armed()
			return settlement{dropped: was && !now, armed: !was && now}
		}
	}
	if again && mayRestart {
		return settlement{restart: true, next: next, why: why}
	}
	return settlement{dropped: mt.armed() && !mt.check(agentName)}
}

// switchInPlace replaces the armed source (if any) by named (if any) in
// the running start, and reports true, when neither adds anything to the
// runtime's environment: a restart would start the same process again.
func (mt *meter) switchInPlace(ctx context.Context, named ports.MeasurementSource) bool {
	mt.mu.Lock()
	carried := len(mt.env) > 0
	mt.mu.Unlock()
	if carried {
		return false
	}
	var m ports.Measurement
	if named != nil {
		var err error
		if m, err = named.Arm(ctx); err != nil {
			mt.log.Warn("measurement source could not be armed", "source", named.Name(), "error", err)
			return false
		}
		if len(m.Env()) > 0 {
			if err := m.Release(); err != nil {
				mt.log.Warn("measurement source could not be released", "source", named.Name(), "error", err)
			}
			return false
		}
	}
	mt.drop()
	if named != nil {
		mt.mu.Lock()
		mt.source, mt.m, mt.env = named, m, nil
		mt.mu.Unlock()
		mt.log.Info("measurement source armed for the runtime the handshake named, without a restart: it needs no settings",
			"source", named.Name(), "runtime", named.RuntimeName())
	}
	return true
}

// settle compares the handshake with the start's measurement settings and
// says whether the runtime must be started again, with which plan and
// why: a source armed for another runtime than the one that answered, or
// no source armed while one reads the runtime that answered. A remote
// launch is never restarted.
func (mt *meter) settle(agentName string, target ports.Target) (measurePlan, string, bool) {
	if target.Remote() {
		return measurePlan{}, "", false
	}
	mt.mu.Lock()
	src := mt.source
	mt.mu.Unlock()
	named := mt.byRuntime(agentName)
	switch {
	case src != nil && recognizes(src, agentName):
		return measurePlan{}, "", false
	case src != nil:
		return measurePlan{settled: true, source: named}, msgRelaunchWithout, true
	case named != nil && !mt.plan.settled:
		return measurePlan{settled: true, source: named}, msgRelaunchWith, true
	}
	return measurePlan{}, "", false
}

// recognizes reports whether agentName is the runtime src reads: by the
// source's own rule when it has one (ports.RuntimeRecognizer, for a
// runtime known under several names), else by its RuntimeName.
func recognizes(src ports.MeasurementSource, agentName string) bool {
	if agentName == "" {
		return false
	}
	if r, ok := src.(ports.RuntimeRecognizer); ok {
		return r.Recognizes(agentName)
	}
	return src.RuntimeName() == agentName
}

// byRuntime is the source that reads the runtime named name, nil if none.
func (mt *meter) byRuntime(name string) ports.MeasurementSource {
	if name == "" {
		return nil
	}
	for _, src := range mt.sources {
		if recognizes(src, name) {
			return src
		}
	}
	return nil
}

// arm claims and arms a source for a local launch of command and returns
// the environment the runtime must carry. A remote launch is never
// claimed. A source that fails to arm is logged and not used: measurement
// never fails a start.
func (mt *meter) arm(ctx context.Context, command []string, target ports.Target) ([]string, error) {
	if target.Remote() {
		return nil, nil
	}
	candidates := mt.sources
	if mt.plan.settled {
		candidates = nil
		if mt.plan.source != nil {
			candidates = []ports.MeasurementSource{mt.plan.source}
		}
	}
	for _, src := range candidates {
		if !mt.plan.settled && !src.Claims(command) {
			continue
		}
		m, err := src.Arm(ctx)
		if err != nil {
			mt.log.Warn("measurement source could not be armed", "source", src.Name(), "error", err)
			return nil, nil
		}
		mt.mu.Lock()
		mt.source, mt.m, mt.env = src, m, m.Env()
		mt.mu.Unlock()
		if mt.plan.settled {
			mt.log.Info("measurement source armed for the runtime the handshake named", "source", src.Name(), "runtime", src.RuntimeName())
		} else {
			mt.log.Info("measurement source claimed the launch", "source", src.Name(), "runtime", src.RuntimeName())
		}
		return m.Env(), nil
	}
	return nil, nil
}

// armed reports whether a source is in use.
func (mt *meter) armed() bool {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.m != nil
}

// check keeps the armed source only when the handshake names its runtime
// (the version is never a reason to refuse). It reports whether a source
// is still in use.
func (mt *meter) check(agentName string) bool {
	mt.mu.Lock()
	src := mt.source
	mt.mu.Unlock()
	if src == nil {
		return false
	}
	if recognizes(src, agentName) {
		return true
	}
	mt.log.Info("the handshake names another runtime than the measurement source reads; measurement dropped",
		"source", src.Name(), "want", src.RuntimeName(), "agent_name", agentName)
	mt.drop()
	return false
}

// opened tells the armed source which session runs.
func (mt *meter) opened(sessionID string, continued bool) {
	mt.mu.Lock()
	m := mt.m
	mt.mu.Unlock()
	if m != nil {
		m.SessionOpened(sessionID, continued)
	}
}

// turnFigures is the meter's answer for one turn: the figures, when the
// turn was measured, and whether the source was dropped for the session
// (the caller lowers "token counts").
type turnFigures struct {
	usage   *domain.Usage
	model   string
	source  string // the source's name
	dropped bool
}

// turnEnded asks the source for the figures of the turn that just ended
// on sessionID, bounded by the turn's own read budget. A source that
// answers nothing before any turn had a figure is dropped for the session;
// after one figure a miss costs that turn only.
func (mt *meter) turnEnded(ctx context.Context, sessionID string, budget time.Duration, res domain.TurnResult) turnFigures {
	mt.mu.Lock()
	m, src, measured := mt.m, mt.source, mt.measured
	mt.mu.Unlock()
	if m == nil || res.Outcome == domain.OutcomeFailed && res.StopReason == "" {
		return turnFigures{}
	}
	if res.Outcome != domain.OutcomeCompleted {
		budget = min(budget, incompleteTurnWait)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	usage, model, ok, err := m.TurnUsage(wctx, sessionID)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// The wait ended before the source could answer: this turn is
		// unmeasured, the source stays.
		mt.log.Debug("measurement source did not answer within the turn's read budget", "source", src.Name())
		return turnFigures{}
	}
	if (err != nil || !ok) && res.Outcome != domain.OutcomeCompleted {
		// A turn that did not complete (cancelled, timed out, refused…)
		// may never have finished a model call: its silence says nothing
		// about the source, which stays.
		mt.log.Debug("measurement source had no figure for a turn that did not complete", "source", src.Name(), "outcome", string(res.Outcome))
		return turnFigures{}
	}
	if err != nil || !ok {
		if measured {
			return turnFigures{}
		}
		mt.log.Info("measurement source reported nothing for the first measured turn; dropped for the session",
			"source", src.Name(), "error", err)
		mt.drop()
		return turnFigures{dropped: true}
	}
	mt.mu.Lock()
	mt.measured = true
	mt.mu.Unlock()
	return turnFigures{usage: &usage, model: model, source: src.Name()}
}

// drop releases the armed source and stops using it.
func (mt *meter) drop() {
	mt.mu.Lock()
	m, src := mt.m, mt.source
	mt.m, mt.source, mt.env = nil, nil, nil
	mt.mu.Unlock()
	if m != nil {
		if err := m.Release(); err != nil {
			mt.log.Warn("measurement source could not be released", "source", src.Name(), "error", err)
		}
	}
}

// release ends measurement at session end.
func (mt *meter) release() { mt.drop() }
