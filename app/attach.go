package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// attachCloseBound bounds the wait, once the turn ended, for the link's
// close to end the held connection.
const attachCloseBound = 5 * time.Second

// AttachOptions configure Attach.
type AttachOptions struct {
	// Launcher's start reattaches to the held connection: it performs no
	// handshake of its own and replays what the holder kept (for a
	// WebSocket, netdial's Options.Resume). A process that is a
	// ports.Resumed (netdial's) says how many of the earlier clients'
	// messages the runtime had received; without it Attach takes every
	// request and prompt as the earlier clients'.
	Launcher ports.Launcher
	// Workspace is the directory the launcher's request names (absolute).
	Workspace string
	// Prompts are the held run's prompts, in order: those the earlier
	// client had not sent are sent, each once, after the turn under way
	// (docs/behaviour.md#held-sessions). None: only the turn under way is
	// followed.
	Prompts []string
	// PermissionPolicy answers the permission requests the earlier
	// client left unanswered; nil refuses them.
	PermissionPolicy ports.PermissionPolicy
	// Answers answers the questions (elicitation/create) the earlier
	// client left unanswered; nil: elicitation is not offered.
	Answers ports.AnswerPolicy
	// OnEvent receives every event of the turns, replayed then live.
	OnEvent func(domain.Event)
	// OnAgentText receives the agent's text chunks as they arrive.
	OnAgentText func(messageID, text string)
	// OnTurn receives each turn's result as it ends, n counting the
	// run's turns from 1.
	OnTurn func(n int, res domain.TurnResult)
	// Clock is the wall clock; nil means the system clock.
	Clock ports.Clock
	// Logger receives the attach's logs; nil discards them.
	Logger *slog.Logger
	// StallTimeout ends the attach when no message came for this long
	// (the turn's result then is turn_timeout, msgTurnStalled's words),
	// leaving the session held; zero waits without bound.
	StallTimeout time.Duration
}

// HeldRun is what Attach followed of a held run.
type HeldRun struct {
	// SessionID is the session the session/new answer named.
	SessionID string
	// Turns are the results of the turns Attach saw end, the run's
	// turns from its first (those the holder replayed included).
	Turns []domain.TurnResult
	// Sent counts the prompts Attach sent itself.
	Sent int
}

// Attach reattaches to a held session and completes its run
// (docs/behaviour.md#held-sessions): it sends no initialize and no
// session/new. The messages the holder kept are read as the session's
// own stream: the session is the one the session/new answer names, and a
// turn ends with the first answer carrying a stopReason, whatever id its
// session/prompt had. A runtime request the earlier client left
// unanswered is answered with o's policies; a prompt of o.Prompts the
// earlier client had not sent is sent once its turn comes, never one it
// sent (the rules are the section's). Once the last prompt's turn ended
// the link is closed, which ends the held session as a run's end does. A
// turn that did not complete ends the run (as run's prompts stop). An
// error is returned when the held session cannot be reached or resumed
// (port_exit), or when the link ended before a turn's answer (port_exit,
// MsgConnEndedBeforeResult); the turns that ended before are in HeldRun.
func Attach(ctx context.Context, o AttachOptions) (HeldRun, error) {
	if o.Launcher == nil {
		return HeldRun{}, errors.New("app: AttachOptions.Launcher is required")
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	plan, err := o.Launcher.Prepare(ports.LaunchRequest{Command: []string{"attach"}, Workspace: o.Workspace})
	if err != nil {
		return HeldRun{}, err
	}
	proc, err := plan.Start(ctx, nil)
	if err != nil {
		return HeldRun{}, err
	}
	f := newHeldFollower(o, proc)
	stop := context.AfterFunc(ctx, func() { _ = proc.CloseStdout() })
	w := watchStall(proc, o.StallTimeout)
	done := f.follow(w.seen)
	stop()
	stalled := w.end()
	f.stream.flush()
	f.stream.endTurn()
	run := HeldRun{SessionID: f.sessionID, Turns: f.turns, Sent: f.sent}
	switch {
	case done:
		closeHeld(proc, o.Logger)
		return run, nil
	case stalled && ctx.Err() == nil:
		// The link was ended at once, without a close: the session stays
		// held for another attach.
		closeHeld(proc, o.Logger)
		f.finished = true // no prompt follows: the link is gone
		f.endTurn(domain.FailedResult(domain.NewError(domain.KindTurnTimeout, msgTurnStalled)))
		run.Turns = f.turns
		return run, nil
	case ctx.Err() != nil:
		closeHeld(proc, o.Logger)
		return run, domain.WrapError(domain.KindTurnCancelled, "the attach was cancelled", ctx.Err())
	}
	closeHeld(proc, o.Logger)
	return run, domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult)
}

// heldMessage is the part of a message Attach reads.
type heldMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// attachIDPrefix begins the id of every request an attach sends; a
// random part follows, so no other client's id is taken for its own.
const attachIDPrefix = "acpdrive-attach-"

// heldFollower reads a held connection's messages and completes its run
// (docs/behaviour.md#held-sessions).
type heldFollower struct {
	o      AttachOptions
	proc   ports.Process
	stream *eventStream
	reply  turnReply
	judge  *permissionJudge

	// earlier is the count of the earlier clients' messages the runtime
	// had received (the resume's answer); accounted counts those the
	// held messages prove, in order. An unknown count is taken as
	// unbounded: every request and prompt the earlier clients'.
	earlier, accounted int64
	idBase             string
	nextID             int

	sessionID string
	begun     int    // turns begun, by anyone
	underway  bool   // a turn is under way
	ownPrompt string // the id of the session/prompt this attach sent, while its turn runs
	sent      int
	turns     []domain.TurnResult
	finished  bool
}

func newHeldFollower(o AttachOptions, proc ports.Process) *heldFollower {
	f := &heldFollower{o: o, proc: proc, earlier: math.MaxInt64}
	if r, ok := proc.(ports.Resumed); ok {
		if n, known := r.ResumedReceived(); known {
			f.earlier = n
		}
	}
	raw := make([]byte, 6)
	_, _ = rand.Read(raw)
	f.idBase = attachIDPrefix + hex.EncodeToString(raw) + "-"
	f.stream = newEventStream(o.Clock, o.Logger, func(ev domain.Event) {
		f.reply.observe(ev)
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}, func(id, text string) {
		if o.OnAgentText != nil {
			o.OnAgentText(id, text)
		}
	}, func() int { return 0 })
	f.judge = newPermissionJudge(Options{PermissionPolicy: o.PermissionPolicy, Answers: o.Answers}, true, nil)
	return f
}

// follow reads the held messages until the run is complete (true) or the
// link ended first (false).
func (f *heldFollower) follow(seen func()) bool {
	br := bufio.NewReaderSize(f.proc.Stdout(), 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			seen()
			var m heldMessage
			if json.Unmarshal(line, &m) != nil {
				f.o.Logger.Debug("held session sent a line that is not JSON")
			} else if f.step(m); f.finished {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// earlierSent takes the earlier clients' next message as accounted for,
// reporting whether the runtime had received one more than those already
// accounted for.
func (f *heldFollower) earlierSent() bool {
	if f.accounted >= f.earlier {
		return false
	}
	f.accounted++
	return true
}

// step applies one message.
func (f *heldFollower) step(m heldMessage) {
	switch {
	case m.Method == "session/update":
		f.stream.update(m.Params)
	case m.Method != "" && len(m.ID) > 0:
		f.request(m)
	case m.Method != "":
		f.o.Logger.Debug("held session's runtime sent a notice an attach does not read", "method", m.Method)
	case len(m.Result) > 0 || len(m.Error) > 0:
		f.answer(m)
	}
}

// answer reads the runtime's answer to a request: an earlier client's is
// one of its messages accounted for; one carrying a stopReason ends the
// turn; the session/new answer names the session.
func (f *heldFollower) answer(m heldMessage) {
	var id string
	own := json.Unmarshal(m.ID, &id) == nil && strings.HasPrefix(id, f.idBase)
	var r struct {
		SessionID  string `json:"sessionId"`
		StopReason string `json:"stopReason"`
	}
	if len(m.Result) > 0 && json.Unmarshal(m.Result, &r) != nil {
		r.SessionID, r.StopReason = "", ""
	}
	// The prompt of a turn under way was accounted for when it began; an
	// error answer to an earlier client while its turn is under way is
	// its prompt's (an acpdrive client has no other request open then).
	turnAnswer := r.StopReason != "" || (len(m.Error) > 0 && (own && id == f.ownPrompt || !own && f.underway && f.ownPrompt == ""))
	if !own && (!turnAnswer || !f.underway) {
		f.accounted++
	}
	if len(m.Error) > 0 {
		if turnAnswer {
			f.endTurn(domain.FailedResult(domain.NewError(domain.KindResponseError, "the runtime answered session/prompt with an error")))
		}
		return
	}
	switch {
	case r.StopReason != "" && (!own || id == f.ownPrompt):
		if !f.underway { // the turn's first message is its answer
			f.begun++
		}
		end, err := f.stream.dialect().Answer(m.Result)
		if err != nil || end == nil {
			f.endTurn(domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable)))
			return
		}
		if !own && r.StopReason == "cancelled" {
			f.earlierSent() // the session/cancel the earlier client sent before it
		}
		f.endTurn(endResult(*end, f.o.Logger))
	case r.SessionID != "" && f.sessionID == "" && !own:
		f.sessionID = r.SessionID
		f.stream.adopt(r.SessionID)
		f.betweenTurns()
	}
}

// endTurn ends the turn under way with res, reports it, and goes on to
// the next prompt.
func (f *heldFollower) endTurn(res domain.TurnResult) {
	f.stream.flush()
	f.stream.endTurn()
	f.stream.underSink(func() { res.Reply, res.ReplyCut = f.reply.take() })
	f.stream.emit(outcomeEvent(res))
	f.turns = append(f.turns, res)
	if f.o.OnTurn != nil {
		f.o.OnTurn(len(f.turns), res)
	}
	f.underway, f.ownPrompt = false, ""
	if f.finished || res.Outcome != domain.OutcomeCompleted {
		f.finished = true // a turn that did not complete ends the run, as run's does
		return
	}
	f.betweenTurns()
}

// betweenTurns decides the next prompt once the session is made or a turn
// ended: the earlier client's next message was it when the runtime
// received one more (the earlier client sends nothing else between its
// turns); otherwise this attach sends it. With no prompt left the run is
// complete. Without prompts (the library's use) only the turn under way
// is followed.
func (f *heldFollower) betweenTurns() {
	if len(f.o.Prompts) == 0 {
		if len(f.turns) > 0 {
			f.finished = true
			return
		}
		f.begun, f.underway = 1, true
		f.earlierSent() // the prompt under way went out from the earlier client
		f.stream.emit(started())
		return
	}
	if f.begun >= len(f.o.Prompts) {
		f.finished = true
		return
	}
	f.begun++
	f.underway = true
	f.stream.emit(started()) // each turn opens with session_started, as a run's does
	if f.earlierSent() {
		return
	}
	f.ownPrompt = f.newID()
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ownPrompt, "method": acpwire.MethodSessionPrompt,
		"params": acpwire.PromptRequest{SessionID: f.sessionID, Prompt: []acpwire.ContentBlock{{Type: "text", Text: f.o.Prompts[f.begun-1]}}}})
	if f.write(raw) != nil {
		return // the link's end ends the follow
	}
	f.sent++
}

// request answers a runtime request the earlier clients left unanswered
// (the runtime had received no further message of theirs), with the
// attach's policies, as a run answers it
// (docs/behaviour.md#permission-posture).
func (f *heldFollower) request(m heldMessage) {
	if !f.underway && f.sessionID != "" && len(f.o.Prompts) > 0 {
		f.o.Logger.Debug("held session's runtime sent a request outside a turn", "method", m.Method)
	}
	if f.earlierSent() {
		return // the earlier client answered it on receipt
	}
	var rid jsonrpc.ID
	_ = json.Unmarshal(m.ID, &rid) // decide reads the method and params only
	req := jsonrpc.Request{ID: rid, Method: m.Method, Params: m.Params}
	sid := requestSession(m.Params)
	session, ours := domain.PermissionParent, sid != "" && sid == f.sessionID
	if !ours {
		session = domain.PermissionOther
	}
	a := decide(req, false, f.judge.judge(req, session, ours))
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if a.errCode != 0 {
		reply["error"] = map[string]any{"code": a.errCode, "message": a.errMsg}
	} else {
		reply["result"] = a.result
	}
	raw, err := json.Marshal(reply)
	if err == nil {
		err = f.write(raw)
	}
	if err != nil {
		f.o.Logger.Debug("could not answer a held session's request", "method", m.Method, "error", err)
	}
	f.stream.decided(a)
	switch {
	case a.refused:
		f.stream.refused(f.sessionID, a.notice)
	case a.person != "":
		f.stream.notice(a.person)
	}
}

// newID is the id of the attach's next request.
func (f *heldFollower) newID() string {
	f.nextID++
	return f.idBase + strconv.Itoa(f.nextID)
}

// write sends one message on the link.
func (f *heldFollower) write(raw []byte) error {
	_, err := f.proc.Stdin().Write(append(raw, '\n'))
	return err
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
