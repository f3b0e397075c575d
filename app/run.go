package app

import (
	"context"
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Run drives one session through its prompts (docs/behaviour.md#fleet):
// one turn per prompt, each retried by failure class and retry_after
// within Retry (Retrier: a runtime whose process is gone is started again
// under the same session, resumed or fresh, which each Replacement
// says), until a turn does not complete or a ceiling is reached; the last
// prompt asks for the structured result (Session.TurnWithResult). The
// zero Run sends nothing.
type Run struct {
	// Prompts are sent in order, one turn each.
	Prompts []string
	// Retry bounds the retries of each turn.
	Retry RetryPolicy
	// Ceilings stop the run before the next prompt.
	Ceilings Ceilings
	// Clock measures the retries' waits; nil means the session's, and
	// the system clock when that is nil.
	Clock ports.Clock
	// OnStart, when set, is told of the session Fleet.Run placed, before
	// its first turn.
	OnStart func(*Session)
	// OnTurnStart, when set, is told of turn n (from 1) before it is sent;
	// false stops the run there (RunResult.Interrupted).
	OnTurnStart func(n int, prompt string) bool
	// TurnContext, when set, gives each turn its context from the run's
	// (a face cancels one turn through it).
	TurnContext func(context.Context) context.Context
	// OnTurn, when set, is told of each prompt's last attempt.
	OnTurn func(RunTurn)
	// OnRetry, when set, is told of each wait before a retry.
	OnRetry func(Retry)
	// OnReplace, when set, is told of each replacement of the runtime.
	OnReplace func(Replacement)
}

// RunTurn is one prompt of a Run, as its last attempt ended.
type RunTurn struct {
	// N is the prompt's number, from 1.
	N int
	// Result is the last attempt's result.
	Result domain.TurnResult
	// RuntimeExit says how the runtime exited when its exit ended the
	// turn (Session.RuntimeExit), "" otherwise.
	RuntimeExit string
	// Replacements are the runtime's replacements during the turn's
	// retries.
	Replacements []Replacement
	// Budgets is where the run stands after the turn.
	Budgets Budgets
}

// RunResult is what a Run did.
type RunResult struct {
	// SessionID, AgentPID and Host name the session the run ended on
	// (one *Session value throughout; its id changes only when a
	// replacement could not resume it).
	SessionID string `json:"session_id,omitempty"`
	AgentPID  int    `json:"agent_pid,omitempty"`
	Host      string `json:"host,omitempty"`
	// Turns are the prompts sent, each as its last attempt ended.
	Turns []RunTurn `json:"-"`
	// Completed reports that every prompt was sent and completed.
	Completed bool `json:"completed"`
	// Result is the last turn's structured result; ResultMissing says
	// why a turn that asked for one had none
	// (docs/behaviour.md#structured-results).
	Result        json.RawMessage `json:"result,omitempty"`
	ResultMissing string          `json:"result_missing,omitempty"`
	// ResultSource is where Result came from: domain.ResultSourceTool or
	// domain.ResultSourceReply; "" without a Result.
	ResultSource string `json:"result_source,omitempty"`
	// Stopped is the ceiling that stopped the run before a prompt.
	Stopped string `json:"stopped,omitempty"`
	// Interrupted reports a run that OnTurnStart stopped.
	Interrupted bool `json:"interrupted,omitempty"`
	// Notice is the closing remark for the ceilings the runtime's figures
	// could not enforce.
	Notice string `json:"notice,omitempty"`
	// Replacements are every replacement of the runtime, in order: each
	// says whether the session was resumed (history kept) or runs fresh.
	Replacements []Replacement `json:"replacements,omitempty"`
	// Budgets is where the run ended against its ceilings.
	Budgets Budgets `json:"-"`
	// Totals are the session's totals: every attempt of every turn.
	Totals domain.Totals `json:"totals"`
	// Err is the failure to start the session (Fleet.Run) or to start its
	// runtime again; StartFailed tells the first.
	Err         error `json:"-"`
	StartFailed bool  `json:"-"`
	// StopErr is what stopping the session reported (Fleet.Run).
	StopErr error `json:"-"`
}

// Drive runs r on s, which stays the caller's to stop. ctx ending
// cancels the running turn (turn_cancelled), which ends the run.
func (r Run) Drive(ctx context.Context, s *Session) RunResult {
	b := r.Ceilings.budgets()
	out := RunResult{Completed: true}
	for i, prompt := range r.Prompts {
		if msg := b.Reached(); msg != "" {
			// A ceiling stops the run before the next prompt
			// (docs/behaviour.md#token-accounting).
			out.Completed, out.Stopped = false, msg
			break
		}
		if r.OnTurnStart != nil && !r.OnTurnStart(i+1, prompt) {
			out.Completed, out.Interrupted = false, true
			break
		}
		turnCtx := ctx
		if r.TurnContext != nil {
			turnCtx = r.TurnContext(ctx)
		}
		var reps []Replacement
		rt := Retrier{Policy: r.Retry, Clock: r.Clock, OnWait: r.OnRetry, OnReplace: func(rep Replacement) {
			reps = append(reps, rep)
			if r.OnReplace != nil {
				r.OnReplace(rep)
			}
		}}
		var res domain.TurnResult
		var err error
		if i == len(r.Prompts)-1 {
			res, _, err = rt.TurnWithResult(turnCtx, s, prompt)
		} else {
			res, _, err = rt.Turn(turnCtx, s, prompt)
		}
		b.add(res)
		t := RunTurn{N: i + 1, Result: res, Replacements: reps, Budgets: b}
		if res.Err != nil && res.Err.Kind == domain.KindPortExit {
			t.RuntimeExit, _ = s.RuntimeExit()
		}
		out.Turns = append(out.Turns, t)
		out.Replacements = append(out.Replacements, reps...)
		out.Result, out.ResultSource = res.Result, res.ResultSource
		if res.ResultMissing != "" {
			out.ResultMissing = res.ResultMissing
		}
		if r.OnTurn != nil {
			r.OnTurn(t)
		}
		if err != nil {
			out.Err = err
		}
		if res.Outcome != domain.OutcomeCompleted {
			out.Completed = false
			break
		}
	}
	out.Budgets = b
	out.Notice = b.Unbounded()
	out.SessionID, out.AgentPID, out.Host = s.ID(), s.PID(), s.Host()
	out.Totals = s.Totals()
	return out
}

// Run places a session with opts (Fleet.Start), drives r on it and stops
// it, bounded by its stop grace and 5 s more. A session that could not
// start is RunResult.Err with StartFailed set.
func (f *Fleet) Run(ctx context.Context, opts Options, r Run) RunResult {
	s, err := f.Start(ctx, opts)
	if err != nil {
		return RunResult{Err: err, StartFailed: true}
	}
	if r.OnStart != nil {
		r.OnStart(s)
	}
	out := r.Drive(ctx, s)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace(s.opts.Settings)+failedStartStopMargin)
	defer cancel()
	out.StopErr = s.Stop(stopCtx)
	return out
}
