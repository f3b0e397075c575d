package app

import (
	"context"
	"errors"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// VerificationPrompt is the fixed prompt of a credential-verification
// session.
const VerificationPrompt = "This is an automated credential check. Reply with the single word OK."

// VerificationBound bounds a whole credential-verification session.
const VerificationBound = 60 * time.Second

// Messages of credential verification (docs/behaviour.md#credential-verification).
const (
	msgCredentialRefused    = "the agent runtime refused its credential: "
	msgCredentialIncomplete = "the agent runtime did not complete a credential verification request: "
	msgVerificationBound    = "no answer within the verification bound of 60 s"
)

// verifyCredential runs the short-lived verification session: its own
// process, initialize, session/new with no tool servers, one fixed prompt,
// and a teardown that prefers session/delete. Its events are not reported.
func verifyCredential(ctx context.Context, opts Options) error {
	bound := domain.WrapError(domain.KindCredentialUnverified, msgCredentialIncomplete+msgVerificationBound, context.DeadlineExceeded)
	vctx, cancel := context.WithTimeoutCause(ctx, VerificationBound, bound)
	defer cancel()
	vo := opts
	vo.OnEvent, vo.OnAgentText, vo.Observers = func(domain.Event) {}, nil, nil
	vo.ResumeSessionID, vo.VerifyCredential = "", false
	vo.Logger = opts.Logger.With("session_kind", "credential_verification")
	s := newSession(vo, true)

	err := s.open(vctx)
	if err == nil {
		err = s.createSession(vctx)
	}
	if err == nil {
		if res := s.Turn(vctx, VerificationPrompt); res.Err != nil && res.Outcome != domain.OutcomeCompleted {
			err = res.Err
			if errors.Is(context.Cause(vctx), bound) {
				err = bound
			}
		}
	}
	stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), opts.Config.StopGrace+10*time.Second)
	defer stop()
	if serr := s.Stop(stopCtx); serr != nil {
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
// (including the 60 s bound) is credential_unverified.
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
