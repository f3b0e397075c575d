package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// attachCloseBound bounds the wait, once the turn ended, for the link's
// close to end the held connection.
const attachCloseBound = 5 * time.Second

// AttachOptions configure Attach.
type AttachOptions struct {
	// Launcher's start reattaches to the held connection: it performs no
	// handshake of its own and replays what the holder kept (for a
	// WebSocket, netdial's Options.Resume).
	Launcher ports.Launcher
	// Workspace is the directory the launcher's request names (absolute).
	Workspace string
	// OnEvent receives every event of the turn, replayed then live.
	OnEvent func(domain.Event)
	// OnAgentText receives the agent's text chunks as they arrive.
	OnAgentText func(messageID, text string)
	// Clock is the wall clock; nil means the system clock.
	Clock ports.Clock
	// Logger receives the attach's logs; nil discards them.
	Logger *slog.Logger
	// StallTimeout ends the attach when no message came for this long
	// (the turn's result then is turn_timeout, msgTurnStalled's words),
	// leaving the session held; zero waits without bound.
	StallTimeout time.Duration
}

// Attach reattaches to a held session and follows its running turn to
// its end (docs/behaviour.md#held-sessions): it sends no initialize, no
// session/new and no prompt — the prompt went out once, from the client
// that started the turn. The messages the holder kept are read as the
// session's own stream: the session is the one the session/new answer
// (or the first update) names, and the turn ends with the first answer
// carrying a stopReason, which is the session/prompt's, whatever id the
// first client gave it. The result is that turn's, its reply taken from
// the events. Once the turn ended the link is closed, which ends the held
// session as a run's end does. An error is returned when the held session
// cannot be reached or resumed (port_exit), or when the link ended before
// the turn's answer (port_exit, MsgConnEndedBeforeResult).
func Attach(ctx context.Context, o AttachOptions) (domain.TurnResult, error) {
	if o.Launcher == nil {
		return domain.TurnResult{}, errors.New("app: AttachOptions.Launcher is required")
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	plan, err := o.Launcher.Prepare(ports.LaunchRequest{Command: []string{"attach"}, Workspace: o.Workspace})
	if err != nil {
		return domain.TurnResult{}, err
	}
	proc, err := plan.Start(ctx, nil)
	if err != nil {
		return domain.TurnResult{}, err
	}
	var reply turnReply
	stream := newEventStream(o.Clock, o.Logger, func(ev domain.Event) {
		reply.observe(ev)
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}, func(id, text string) {
		if o.OnAgentText != nil {
			o.OnAgentText(id, text)
		}
	}, func() int { return 0 })
	stop := context.AfterFunc(ctx, func() { _ = proc.CloseStdout() })
	w := watchStall(proc, o.StallTimeout)
	res, ok := followHeldTurn(proc.Stdout(), stream, o.Logger, w.seen)
	stop()
	stalled := w.end()
	stream.flush()
	stream.endTurn()
	switch {
	case stalled && ctx.Err() == nil:
		// The link was ended at once, without a close: the session stays
		// held for another attach.
		closeHeld(proc, o.Logger)
		res = domain.FailedResult(domain.NewError(domain.KindTurnTimeout, msgTurnStalled))
		stream.underSink(func() { res.Reply, res.ReplyCut = reply.take() })
		stream.emit(outcomeEvent(res))
		return res, nil
	case ctx.Err() != nil:
		closeHeld(proc, o.Logger)
		return domain.TurnResult{}, domain.WrapError(domain.KindTurnCancelled, "the attach was cancelled", ctx.Err())
	case !ok:
		closeHeld(proc, o.Logger)
		return domain.TurnResult{}, domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult)
	}
	stream.underSink(func() { res.Reply, res.ReplyCut = reply.take() })
	stream.emit(outcomeEvent(res))
	closeHeld(proc, o.Logger)
	return res, nil
}

// heldMessage is the part of a message Attach reads.
type heldMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// followHeldTurn feeds the messages of r to stream until the turn's
// answer and returns its result; false when r ended first.
func followHeldTurn(r io.Reader, stream *eventStream, log *slog.Logger, seen func()) (domain.TurnResult, bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			seen()
			var m heldMessage
			if json.Unmarshal(line, &m) != nil {
				log.Debug("held session sent a line that is not JSON")
			} else if res, done := heldStep(m, stream, log); done {
				return res, true
			}
		}
		if err != nil {
			return domain.TurnResult{}, false
		}
	}
}

// heldStep applies one message: an update to the stream, the session's
// id adopted from the session/new answer, the turn's answer ending it.
// A request of the runtime is not answered: the client that started the
// turn answered it, or the turn waits for one.
func heldStep(m heldMessage, stream *eventStream, log *slog.Logger) (domain.TurnResult, bool) {
	switch {
	case m.Method == "session/update":
		stream.update(m.Params)
	case m.Method != "":
		log.Debug("held session's runtime sent a request or notice an attach does not answer", "method", m.Method)
	case len(m.Result) > 0:
		var r struct {
			SessionID  string `json:"sessionId"`
			StopReason string `json:"stopReason"`
		}
		if json.Unmarshal(m.Result, &r) != nil {
			return domain.TurnResult{}, false
		}
		if r.StopReason != "" {
			end, err := stream.dialect().Answer(m.Result)
			if err != nil || end == nil {
				return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable)), true
			}
			return endResult(*end, log), true
		}
		if r.SessionID != "" {
			stream.adopt(r.SessionID)
		}
	}
	return domain.TurnResult{}, false
}

// closeHeld closes the link (the held session ends with it, as a run's
// end ends it) and releases it, the wait bounded.
func closeHeld(proc ports.Process, log *slog.Logger) {
	_ = proc.Stdin().Close()
	drained := make(chan struct{})
	go func() { // the close handshake's answer is read here; ends with the link
		defer close(drained)
		_, _ = io.Copy(io.Discard, proc.Stdout())
	}()
	t := time.NewTimer(attachCloseBound)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		log.Debug("held connection did not end in time after the attach closed it")
		_ = proc.Kill()
		_ = proc.CloseStdout()
		<-drained
	}
	if err := proc.Release(); err != nil {
		log.Debug("held connection's release failed", "error", err)
	}
}

// stallWatch ends the link when no message came for its bound.
type stallWatch struct {
	activity chan struct{}
	done     chan struct{}
	stalled  atomic.Bool
	wg       sync.WaitGroup
}

// watchStall starts the watch (none for a zero bound).
func watchStall(proc ports.Process, bound time.Duration) *stallWatch {
	w := &stallWatch{activity: make(chan struct{}, 1), done: make(chan struct{})}
	if bound <= 0 {
		return w
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTimer(bound)
		defer t.Stop()
		for {
			select {
			case <-w.activity:
				t.Reset(bound)
			case <-t.C:
				w.stalled.Store(true)
				_ = proc.CloseStdout()
				return
			case <-w.done:
				return
			}
		}
	}()
	return w
}

// seen notes a message.
func (w *stallWatch) seen() {
	select {
	case w.activity <- struct{}{}:
	default:
	}
}

// end stops the watch, awaited, and reports whether it ended the link.
func (w *stallWatch) end() bool {
	close(w.done)
	w.wg.Wait()
	return w.stalled.Load()
}

// CheckLaunch makes the checks a start makes before anything runs — the
// workspace and the program, through l's Prepare — and starts nothing: a
// held run makes them before it starts a holder for the runtime
// (docs/behaviour.md#held-sessions). The error is Prepare's.
func CheckLaunch(l ports.Launcher, command []string, workspace string) error {
	if l == nil {
		return errors.New("app: CheckLaunch needs a launcher")
	}
	_, err := l.Prepare(ports.LaunchRequest{Command: command, Workspace: workspace})
	return err
}
