package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// VerificationPrompt is the fixed prompt of a credential-verification
// session.
const VerificationPrompt = "This is an automated credential check. Reply with the single word OK."

// VerificationBound bounds a whole credential-verification session unless
// domain.SessionSettings.VerificationBound sets a shorter bound.
const VerificationBound = domain.MaxVerificationBound

// Messages of credential verification (docs/behaviour.md#credential-verification).
const (
	msgCredentialRefused    = "the agent runtime refused its credential: "
	msgCredentialIncomplete = "the agent runtime did not complete a credential verification request: "
)

// VerifyCredential runs a short-lived credential-verification session over
// a start of opts' runtime (docs/behaviour.md#credential-verification): its
// own process, initialize, session/new with no tool servers, one fixed
// prompt, and a teardown that prefers session/delete, all within the
// verification bound. Its events are not reported; nothing is measured.
// It returns nil when the runtime answered the prompt; otherwise a
// *domain.AgentError (credential_unverified, or the kind that kept the
// runtime from starting), or an *OptionsError for a programmer's mistake.
func VerifyCredential(ctx context.Context, opts Options) error {
	opts, err := opts.resolved()
	if err != nil {
		return err
	}
	return verify(ctx, opts)
}

// verifyObserved runs verify as the first step of a start observed by
// obs, and reports a failure as the start's end.
func verifyObserved(ctx context.Context, opts Options, obs *observation) error {
	began := opts.Clock.Now()
	err := verify(ctx, opts)
	now := opts.Clock.Now()
	obs.step(ports.StepVerify, "", began, now, err)
	if err != nil {
		ev := domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), Time: now.UTC()}
		opts.OnEvent(ev)
		obs.event(ev)
		obs.end(now, domain.NewCapabilities(false, false), err)
	}
	return err
}

// verify is VerifyCredential over resolved options: the same start as a
// working session's, with nothing delivered, measured or reported.
func verify(ctx context.Context, opts Options) error {
	limit := opts.Settings.EffectiveVerificationBound()
	bound := domain.WrapError(domain.KindCredentialUnverified,
		fmt.Sprintf("%sno answer within the verification bound of %s", msgCredentialIncomplete, boundText(limit)), context.DeadlineExceeded)
	vctx, cancel := context.WithTimeoutCause(ctx, limit, bound)
	defer cancel()
	vo := opts
	vo.OnEvent, vo.OnAgentText, vo.OnReadIdle, vo.Observers = func(domain.Event) {}, nil, nil, nil
	vo.OnToolStart = nil
	vo.ResumeSessionID, vo.VerifyCredential, vo.MeasurementSources = "", false, nil
	vo.ForkSessionID, vo.Settings.Subagents = "", false
	vo.Settings.MCPConfigPath, vo.Settings.ConfirmToolServers = "", false
	vo.Settings.Session = domain.SessionConfig{} // a verification configures nothing
	vo.Logger = opts.Logger.With("session_kind", "credential_verification")
	s := newSession(newConnection(vo, false), vo, nil)

	err := s.open(vctx, nil)
	if err == nil {
		err = s.createSession(vctx)
	}
	if err == nil {
		// The prompt goes through the turn engine alone: a verification
		// turn has no events, no measurement and no observation.
		t, _, _, _ := s.turns.begin()
		req := promptRequest{sessionID: s.ID(), text: VerificationPrompt}
		res := s.turns.run(vctx, t, s.prompter(), boundsOf(vo.Settings), req)
		s.protocol().endTurn()
		t.handedOver()
		s.turns.finish()
		if res.Err != nil && res.Outcome != domain.OutcomeCompleted {
			err = res.Err
		}
	}
	if err != nil && errors.Is(context.Cause(vctx), bound) {
		err = bound
	}
	if s.res.agent.Advertised.Delete {
		// The verification conversation is deleted where the runtime can,
		// closed otherwise (docs/behaviour.md#teardown).
		s.res.endWith = acpwire.MethodSessionDelete
	}
	if serr := s.stopWithin(ctx); serr != nil {
		s.log.Debug("verification session teardown reported", "error", serr)
	}
	if err != nil {
		err = verificationError(err)
		s.log.Warn("credential verification failed", "error", err)
		return err
	}
	s.log.Info("credential verified", "session_id", s.ID())
	return nil
}

// verificationError maps a failed verification: a -32000 answer is a
// refused credential; kinds that kept the session from starting, an early
// exit, and non-retryable kinds keep their own kind; everything else
// (including the verification bound) is credential_unverified.
func verificationError(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeAuthRequired {
		return domain.WrapError(domain.KindCredentialUnverified, msgCredentialRefused+rpcErr.Message, rpcErr)
	}
	var ae *domain.AgentError
	if !errors.As(err, &ae) {
		return domain.WrapError(domain.KindCredentialUnverified, msgCredentialIncomplete+err.Error(), err)
	}
	switch {
	case ae.Kind == domain.KindCredentialUnverified:
		return ae
	case ae.Kind == domain.KindAgentNotFound, ae.Kind == domain.KindInvalidWorkspaceCWD, ae.Kind == domain.KindPortExit:
		return ae
	case !ae.Kind.Retryable():
		return ae
	}
	return domain.WrapError(domain.KindCredentialUnverified, msgCredentialIncomplete+ae.Message, ae)
}

// boundText writes a bound the way docs/behaviour.md#credential-verification
// does: whole seconds as seconds ("60s", never "1m0s"), anything finer as
// time.Duration writes it ("700ms").
func boundText(d time.Duration) string {
	if d > 0 && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
