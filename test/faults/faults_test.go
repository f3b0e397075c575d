//go:build unix

package faults

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// Contract strings, written out as docs/behaviour.md spells them.
const (
	earlyExit       = "the agent runtime exited before responding: "
	connEnded       = "the agent's connection ended before a response arrived"
	outputLost      = "the agent runtime exited before the session finished collecting its output"
	lineOver        = "a line from the agent exceeded the connection's line bound"
	timedOut        = "timed out waiting for a response"
	startCancelled  = "session start cancelled"
	stalled         = "the agent produced no event within stall_timeout_ms"
	turnExceeded    = "the turn exceeded turn_timeout_ms"
	unparseable     = "received a line that could not be parsed as JSON-RPC"
	unimplemented   = "the agent called a method this client does not implement"
	bothResultError = "the agent's response to the prompt carried both a result and an error"
	elicitationMsg  = "agent asked for a decision only a person can make: an answer to a question"
	refusedNotice   = "refused a permission request because this run is unattended and no one can approve it"
)

type scenario struct {
	name string
	run  func(t *testing.T)
}

// startFails runs a start that must fail with kind and msg within bound.
func startFails(behaviour string, args []string, kind domain.ErrorKind, msg string, bound time.Duration) func(*testing.T) {
	return func(t *testing.T) {
		r := newRig(t, behaviour, args...)
		elapsed, err := r.start(context.Background())
		wantErr(t, err, kind, msg)
		within(t, "the failed start", elapsed, bound)
		if n := r.count(domain.EventStartupFailed, msg); msg != "" && n != 1 {
			t.Errorf("%d startup_failed events with the message; want 1", n)
		}
	}
}

// teardownBound is what a failed start may add for its teardown.
const teardownBound = stopGrace + time.Second

func scenarios() []scenario {
	return []scenario{
		// --- crashes, one per phase ---
		{"crash/before-initialize", startFails("exit", []string{"3", "fatal: bad config\n"},
			domain.KindPortExit, earlyExit+"exit status 3: fatal: bad config", teardownBound)},
		{"crash/exit-127-with-message", startFails("exit", []string{"127", "sh: 1: nosuchagent: not found\n"},
			domain.KindPortExit, earlyExit+"exit status 127: sh: 1: nosuchagent: not found", teardownBound)},
		{"crash/no-stderr", startFails("exit", []string{"4", ""},
			domain.KindPortExit, earlyExit+"exit status 4: no standard-error output", teardownBound)},
		{"crash/stderr-cleaned", startFails("exit", []string{"2", "\x1b[31mred\x1b[0m\n\n   two  \n\xffz\a\n"},
			domain.KindPortExit, earlyExit+"exit status 2: red | two | \uFFFDz", teardownBound)},
		{"crash/killed-by-signal-at-initialize", startFails("killed-at-init", nil,
			domain.KindPortExit, earlyExit+"signal: killed: no standard-error output", teardownBound)},
		{"crash/after-initialize", startFails("crash-after-init", nil,
			domain.KindPortExit, earlyExit+"exit status 5: died after initialize", teardownBound)},
		{"crash/during-session-new", startFails("crash-during-new", nil,
			domain.KindPortExit, earlyExit+"exit status 6: died during session/new", teardownBound)},
		{"crash/mid-turn", func(t *testing.T) {
			r := newRig(t, "crash-mid-turn")
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindPortExit, connEnded)
			within(t, "the turn", elapsed, readTimeout)
			if got := r.sess.LastMessage().Text; got != "partial" {
				t.Errorf("last message %q; want the partial chunk", got)
			}
		}},
		{"crash/between-turns", func(t *testing.T) {
			r := newRig(t, "crash-between-turns")
			r.mustStart()
			r.mustComplete("one")
			pid := r.sess.PID()
			waitFor(t, "the runtime to exit", 5*time.Second, func() bool { return !aliveOrUnreaped(pid) })
			res, elapsed := r.turn(context.Background(), "two")
			wantResult(t, res, domain.OutcomeFailed, domain.KindPortExit, connEnded)
			within(t, "the second turn", elapsed, readTimeout)
		}},

		// --- hangs, one per call ---
		{"hang/initialize-cancelled-by-ctx", func(t *testing.T) {
			r := newRig(t, "hang-init")
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			elapsed, err := r.start(ctx)
			wantErr(t, err, domain.KindTurnCancelled, startCancelled)
			within(t, "the cancelled start", elapsed, 300*time.Millisecond+teardownBound)
		}},
		{"hang/session-new-response-timeout", func(t *testing.T) {
			r := newRig(t, "hang-new")
			elapsed, err := r.start(context.Background())
			wantErr(t, err, domain.KindResponseTimeout, timedOut)
			if err != nil && !strings.Contains(err.Error(), "session/new") {
				t.Errorf("error %q does not name session/new", err)
			}
			if elapsed < readTimeout {
				t.Errorf("start failed after %s, before read_timeout %s", elapsed, readTimeout)
			}
			within(t, "the start", elapsed, readTimeout+teardownBound)
		}},
		{"hang/prompt-stall-timer", func(t *testing.T) {
			r := newRig(t, "hang-prompt")
			stall := 500 * time.Millisecond
			r.opts.Settings.StallTimeout = stall
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnTimeout, stalled)
			if elapsed < stall {
				t.Errorf("turn ended after %s, before the stall timeout", elapsed)
			}
			within(t, "the stalled turn", elapsed, stall+readTimeout)
			// Stop closes the runtime's stdin; when the runtime reaches its
			// end it has read every line the session ever sent it.
			if _, err := r.stop(stopGrace + 10*time.Second); err != nil {
				t.Errorf("stop: %v", err)
			}
			rep := r.report()
			if len(rep["eof"]) != 1 {
				t.Fatalf("runtime report %v: it did not reach the end of its stdin", rep)
			}
			if n := len(rep["cancel"]); n != 1 {
				t.Errorf("runtime got %d session/cancel; want exactly 1", n)
			}
		}},
		{"hang/turn-timeout", func(t *testing.T) {
			r := newRig(t, "hang-prompt")
			r.opts.Settings.TurnTimeout = 500 * time.Millisecond
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnTimeout, turnExceeded)
			within(t, "the timed-out turn", elapsed, 500*time.Millisecond+readTimeout)
		}},
		{"hang/session-cancel-ignored", func(t *testing.T) {
			r := newRig(t, "hang-prompt")
			r.mustStart()
			ctx, cancel := context.WithCancel(context.Background())
			cancelledAt := make(chan time.Time, 1)
			time.AfterFunc(200*time.Millisecond, func() {
				cancelledAt <- time.Now()
				cancel()
			})
			res, elapsed := r.turn(ctx, "go")
			ended := time.Now()
			wantResult(t, res, domain.OutcomeCancelled, domain.KindTurnCancelled, "turn cancelled")
			// The post-cancel wait starts after the cancel and lasts
			// read_timeout: a lower bound, measured from the cancel itself.
			if waited := ended.Sub(<-cancelledAt); waited < readTimeout*3/4 {
				t.Errorf("turn ended %s after the cancel: the post-cancel wait should last about read_timeout", waited)
			}
			within(t, "the cancelled turn", elapsed, 200*time.Millisecond+readTimeout)
		}},
		{"hang/cancel-acknowledged-32800", func(t *testing.T) {
			r := newRig(t, "cancel-answer", "-32800")
			r.mustStart()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			res, elapsed := r.turn(ctx, "go")
			wantResult(t, res, domain.OutcomeCancelled, domain.KindTurnCancelled, "turn cancelled")
			within(t, "the cancelled turn", elapsed, readTimeout)
		}},
		{"hang/cancel-answered-end-turn-is-ignored", func(t *testing.T) {
			r := newRig(t, "cancel-answer", "end_turn")
			r.mustStart()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			res, _ := r.turn(ctx, "go")
			wantResult(t, res, domain.OutcomeCancelled, domain.KindTurnCancelled, "turn cancelled")
		}},
		{"hang/session-close-bounded-at-half-grace", func(t *testing.T) {
			r := newRig(t, "close-hang")
			grace := 6 * time.Second
			r.opts.Settings.StopGrace = grace
			r.mustStart()
			r.mustComplete("go")
			elapsed, err := r.stop(grace + 5*time.Second)
			if err != nil {
				t.Errorf("stop: %v", err)
			}
			rep := r.report()
			if len(rep["close"]) != 1 || len(rep["eof"]) != 1 {
				t.Fatalf("runtime report %v; want one session/close, then stdin closed", rep)
			}
			// The runtime ignores SIGTERM and leaves at EOF: Stop's time is
			// the session/close wait, which must end at half the grace. Not
			// before it (timers do not fire early), and well before the
			// whole grace: the ceiling only tells half the grace from all
			// of it, with half the grace (3 s) to spare for a loaded machine.
			if elapsed < grace/2-200*time.Millisecond {
				t.Errorf("stop took %s; session/close should be given half the grace (%s)", elapsed, grace/2)
			}
			if elapsed >= grace {
				t.Errorf("stop took %s, the whole grace %s; session/close should be given half of it", elapsed, grace)
			}
		}},

		// --- lines ---
		{"line/garbage", func(t *testing.T) {
			r := newRig(t, "garbage")
			r.mustStart()
			r.mustComplete("go")
			r.mustComplete("again")
			if n := r.count(domain.EventMalformed, unparseable); n < 4 {
				t.Errorf("%d malformed %q events; want at least the 4 garbage lines of the turn", n, unparseable)
			}
			if got := r.sess.LastMessage().Text; got != "ok" {
				t.Errorf("last message %q", got)
			}
		}},
		{"line/invalid-utf8", func(t *testing.T) {
			r := newRig(t, "bad-utf8")
			r.mustStart()
			r.mustComplete("go")
			r.mustComplete("again")
			for _, ev := range r.kept() {
				if !utf8.ValidString(ev.Message) {
					t.Errorf("event %s carries invalid UTF-8: %q", ev.Type, ev.Message)
				}
			}
		}},
		{"line/10MiB-minus-1-accepted", lineAccepted(lineBound - 1)},
		{"line/exactly-10MiB-accepted", lineAccepted(lineBound)},
		{"line/10MiB-plus-1-outcome-unknown", lineRefused(lineBound + 1)},
		{"line/endless-without-newline", func(t *testing.T) {
			r := newRig(t, "endless-line")
			// The stall timer must not win the race on a loaded machine
			// (8 s did once, under a load average of 90): generous, since
			// the line bound ends the turn long before it.
			r.opts.Settings.StallTimeout = 2 * time.Minute
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			// The outcome tells the line bound from the stall timer (that
			// would end it turn_timeout); the bound only means "did not hang".
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, lineOver)
			within(t, "the turn", elapsed, readTimeout+time.Second)
			if n := r.count(domain.EventMalformed, lineOver); n != 1 {
				t.Errorf("%d malformed line-bound events; want 1", n)
			}
		}},

		// --- identifiers and responses ---
		{"ids/foreign-ids-in-responses", func(t *testing.T) {
			r := newRig(t, "foreign-response-ids")
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			if res.StopReason != "end_turn" {
				t.Errorf("stop reason %q: a response with a foreign id was taken for the prompt's", res.StopReason)
			}
			// The responses with ids -1, "N", N.5, null, 1e400 and 0 are
			// JSON-RPC responses to no waiting call: dropped. Those with an
			// object, an array or a boolean id are not JSON-RPC messages.
			if n := r.count(domain.EventMalformed, unparseable); n != 3 {
				t.Errorf("%d malformed %q events; want 3, one per response whose id is an object, an array or a boolean", n, unparseable)
			}
			r.mustComplete("again")
		}},
		{"ids/every-id-type-in-requests", func(t *testing.T) {
			r := newRig(t, "request-ids")
			r.mustStart()
			r.mustComplete("go")
			r.mustComplete("again")
			answers := r.report()["answer"]
			for _, want := range []string{"0 -32601", "-7 -32601", `"str" -32601`, "99 -32601"} {
				if n := countOf(answers, want); n != 1 {
					t.Errorf("answer %q seen %d times; want once (answers: %q)", want, n, answers)
				}
			}
			t.Logf("answers to requests with odd ids: %q", answers)
		}},
		{"ids/non-integer-numeric-id-requests-answered", func(t *testing.T) {
			// JSON-RPC 2.0: an id is a string, a number or null (numbers
			// SHOULD NOT have fractions, but may); behaviour.md: every
			// request is answered on receipt. Each is answered -32601 with
			// its id exactly as sent, and none is taken for malformed.
			r := newRig(t, "request-ids")
			r.mustStart()
			r.mustComplete("go")
			answers := r.report()["answer"]
			for _, id := range []string{"2.5", "1e3", "-0", "123456789012345678901234567890"} {
				if n := countOf(answers, id+" -32601"); n != 1 {
					t.Errorf("answer to the request with id %s seen %d times; want once (answers: %q)", id, n, answers)
				}
			}
			if n := r.count(domain.EventMalformed, unparseable); n != 3 {
				t.Errorf("%d malformed %q events; want 3, one per request whose id is an object, an array or a boolean", n, unparseable)
			}
		}},
		{"ids/duplicate-responses", func(t *testing.T) {
			r := newRig(t, "duplicate-responses")
			r.mustStart()
			if id := r.sess.ID(); id != "s1" {
				t.Errorf("session ID %q; want the first answer's s1", id)
			}
			res, _ := r.turn(context.Background(), "one")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			res, _ = r.turn(context.Background(), "two")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
		}},
		{"ids/result-and-error", func(t *testing.T) {
			r := newRig(t, "result-and-error")
			r.opts.Settings.TurnTimeout = 3 * time.Second // a hang ends here, not at the 60 s default
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, bothResultError)
			r.mustComplete("again")
		}},
		{"handshake/protocol-version-2", startFails("protocol-version", []string{"2"},
			domain.KindAgentNotFound, "agent reported protocol version 2, want 1", teardownBound)},
		{"handshake/protocol-version-string", startFails("protocol-version", []string{`"1"`},
			domain.KindResponseError, "initialize response did not decode", teardownBound)},
		{"handshake/protocol-version-absent", func(t *testing.T) {
			r := newRig(t, "protocol-version", "absent")
			elapsed, err := r.start(context.Background())
			wantErr(t, err, domain.KindResponseError, "")
			within(t, "the start", elapsed, teardownBound)
			if len(r.report()["session-new"]) != 0 {
				t.Error("session/new was sent after a handshake without protocolVersion")
			}
			t.Logf("absent protocolVersion: %v", err)
		}},
		{"updates/foreign-session-dropped", func(t *testing.T) {
			r := newRig(t, "foreign-session")
			r.mustStart()
			r.mustComplete("go")
			if got := r.sess.LastMessage().Text; got != "ok" && got != "mine" {
				t.Errorf("last message %q", got)
			}
			for _, ev := range r.kept() {
				if strings.Contains(ev.Message, "FOREIGN") || ev.Message == "plan update" {
					t.Errorf("event %s %q from a foreign session was not dropped", ev.Type, ev.Message)
				}
			}
			if n := r.count(domain.EventNotification, "mine"); n != 1 {
				t.Errorf("%d notifications of the own message; want 1", n)
			}
		}},

		// --- requests from the runtime ---
		{"requests/10000-permission-options", func(t *testing.T) {
			r := newRig(t, "many-options")
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			within(t, "the turn", elapsed, readTimeout)
			got := r.report()["permission"]
			if len(got) != 1 || !strings.Contains(got[0], `"optionId":"r-last"`) || !strings.Contains(got[0], `"selected"`) {
				t.Errorf("permission answer %q; want the only reject_once option selected", got)
			}
			if n := r.count(domain.EventNotification, refusedNotice); n != 1 {
				t.Errorf("%d refusal notifications; want 1", n)
			}
		}},
		{"requests/permission-params-null-32602", func(t *testing.T) {
			r := newRig(t, "permission-null")
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			rep := r.report()
			if !slices.Equal(rep["null"], []string{"-32602"}) || !slices.Equal(rep["missing"], []string{"-32602"}) {
				t.Errorf("answers %v; want -32602 for params null and missing", rep)
			}
			r.mustComplete("again")
		}},
		{"requests/fs-and-terminal-32601", func(t *testing.T) {
			r := newRig(t, "client-methods")
			r.mustStart()
			r.mustComplete("go")
			answers := r.report()["answer"]
			if len(answers) != 6 {
				t.Fatalf("answers %q; want 6", answers)
			}
			for i, m := range []string{"fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output", "terminal/kill", "x/unknown"} {
				if !strings.HasPrefix(answers[i], "-32601 ") || !strings.Contains(answers[i], `"method":"`+m+`"`) {
					t.Errorf("answer to %s: %q; want -32601 with data naming the method", m, answers[i])
				}
			}
			if n := r.count(domain.EventMalformed, unimplemented); n != 6 {
				t.Errorf("%d malformed %q events; want 6", n, unimplemented)
			}
		}},
		{"requests/elicitation-input-required", func(t *testing.T) {
			r := newRig(t, "elicitation")
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeInputRequired, domain.KindTurnInputRequired, elicitationMsg)
			within(t, "the turn", elapsed, readTimeout)
			if got := r.report()["elicitation"]; !slices.Equal(got, []string{"-32601"}) {
				t.Errorf("elicitation answered %q; want -32601", got)
			}
		}},
		{"requests/runtime-stops-reading-stdin", func(t *testing.T) {
			r := newRig(t, "deaf-flood")
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindPortExit, domain.MsgWriteFailed)
			within(t, "the turn", elapsed, readTimeout)
			// A stuck write must not hold Stop: a Stop waiting on it would
			// wait for ever, which the "did not hang" ceiling catches.
			stopBound := 3 * time.Second
			elapsed, _ = r.stop(stopBound)
			within(t, "stop", elapsed, stopBound)
		}},

		// --- stop reasons that fool ---
		{"stop-reason/cancelled-unasked", func(t *testing.T) {
			r := newRig(t, "stop-reason", `"cancelled"`)
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnFailed, "agent reported a cancelled stop reason without a cancellation on either side")
		}},
		{"stop-reason/unknown-cut-to-200-runes", func(t *testing.T) {
			long := strings.Repeat("é", 1000)
			r := newRig(t, "stop-reason", `"`+long+`"`)
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			want := `agent reported an unrecognized stop reason: "` + domain.TruncateRunes(long, 200) + `"`
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, want)
			r.mustComplete("again")
		}},
		{"stop-reason/not-a-string", func(t *testing.T) {
			r := newRig(t, "stop-reason", `{"x":1}`)
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, "the agent's response to the prompt did not decode")
		}},

		// --- processes ---
		{"proc/sigterm-ignored-by-30-process-tree", func(t *testing.T) {
			r := newRig(t, "term-tree", "29")
			r.mustStart()
			r.mustComplete("go")
			waitFor(t, "30 processes", 10*time.Second, func() bool { return len(readPIDs(r.dir)) >= 30 })
			elapsed, err := r.stop(stopGrace + 10*time.Second)
			if err != nil {
				t.Errorf("stop: %v", err)
			}
			if elapsed < stopGrace*3/4 {
				t.Errorf("stop took %s: SIGTERM is ignored, so the grace should have run out", elapsed)
			}
			within(t, "stop", elapsed, stopGrace+time.Second)
		}},
		{"proc/drain-bound", func(t *testing.T) {
			r := newRig(t, "drain-hold")
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindPortExit, outputLost)
			if elapsed < app.DefaultDrainBound*3/4 {
				t.Errorf("turn ended after %s, before the drain bound %s", elapsed, app.DefaultDrainBound)
			}
			within(t, "the turn", elapsed, app.DefaultDrainBound)
			res, _ = r.turn(context.Background(), "again")
			wantResult(t, res, domain.OutcomeFailed, domain.KindPortExit, outputLost)
		}},
		{"proc/fork-storm", func(t *testing.T) {
			r := newRig(t, "fork-storm", "300")
			r.mustStart()
			r.mustComplete("go")
			if n := len(readPIDs(r.dir)); n != 301 {
				t.Errorf("%d processes recorded; want 301", n)
			}
			elapsed, err := r.stop(stopGrace + 10*time.Second)
			if err != nil {
				t.Errorf("stop: %v", err)
			}
			within(t, "stop", elapsed, stopGrace+time.Second)
		}},
		{"proc/shell-metacharacters-passed-literally", func(t *testing.T) {
			args := []string{"$(touch pwned)", "`touch pwned2`", "; touch pwned3", "a && b", "|", "*", "'", `"`, "$HOME", ">out", "\\n", "  spaced  ", ""}
			r := newRig(t, "argv-echo", args...)
			r.mustStart()
			r.mustComplete("go")
			var got []string
			if rep := r.report()["argv"]; len(rep) == 1 {
				_ = json.Unmarshal([]byte(rep[0]), &got)
			}
			if !slices.Equal(got, args) {
				t.Errorf("runtime got argv %q; want %q", got, args)
			}
			for _, f := range []string{"pwned", "pwned2", "pwned3", "out"} {
				if _, err := os.Stat(filepath.Join(r.dir, f)); err == nil {
					t.Errorf("%s exists: a shell ran the command", f)
				}
			}
		}},
		{"proc/leader-leaves-its-group", func(t *testing.T) {
			r := newRig(t, "setsid-leader")
			r.mustStart()
			r.mustComplete("go")
			t.Logf("leader's report: %v", r.report())
			elapsed, err := r.stop(stopGrace + 10*time.Second)
			if err != nil {
				t.Errorf("stop: %v", err)
			}
			within(t, "stop", elapsed, stopGrace+time.Second)
		}},
		{"proc/grandchild-double-forks-and-setsids", func(t *testing.T) {
			r := newRig(t, "double-fork")
			r.mustStart()
			r.mustComplete("go")
			if n := len(readPIDs(r.dir)); n != 3 {
				t.Errorf("%d processes recorded; want leader, middle, grandchild", n)
			}
			if _, err := r.stop(stopGrace + 10*time.Second); err != nil {
				t.Errorf("stop: %v", err)
			}
		}},
	}
}

func lineAccepted(n int) func(*testing.T) {
	return func(t *testing.T) {
		r := newRig(t, "line", itoa(n))
		r.mustStart()
		res, _ := r.turn(context.Background(), "go")
		wantResult(t, res, domain.OutcomeCompleted, "", "")
		msg := r.sess.LastMessage().Text
		if utf8.RuneCountInString(msg) != 500 || !strings.HasSuffix(msg, "…") {
			t.Errorf("message of %d runes ending %q; want 500 runes ending …", utf8.RuneCountInString(msg), lastRunes(msg, 3))
		}
		if n := r.count(domain.EventMalformed, lineOver); n != 0 {
			t.Errorf("%d line-bound events for a line within the bound", n)
		}
	}
}

func lineRefused(n int) func(*testing.T) {
	return func(t *testing.T) {
		r := newRig(t, "line", itoa(n))
		r.mustStart()
		res, elapsed := r.turn(context.Background(), "go")
		wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, lineOver)
		within(t, "the turn", elapsed, readTimeout+time.Second)
		if n := r.count(domain.EventMalformed, lineOver); n != 1 {
			t.Errorf("%d malformed line-bound events; want 1", n)
		}
		r.mustComplete("the connection goes on")
	}
}

func TestFaults(t *testing.T) {
	all := scenarios()
	if len(all) < 40 {
		t.Errorf("only %d scenarios", len(all))
	}
	for _, sc := range all {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// TestBounded holds the scenarios that measure this process's memory; they
// run one at a time, before the parallel ones.
func TestBounded(t *testing.T) {
	t.Run("memory/2GiB-of-stderr-keeps-the-tail", func(t *testing.T) {
		r := newRig(t, "stderr-flood")
		var peak atomic.Uint64
		stop := sampleHeap(&peak)
		elapsed, err := r.start(context.Background())
		growth := stop()
		wantErr(t, err, domain.KindPortExit, "")
		ae, _ := err.(*domain.AgentError)
		if ae != nil {
			prefix := earlyExit + "exit status 7: [earlier output omitted] "
			if !strings.HasPrefix(ae.Message, prefix) || !strings.HasSuffix(ae.Message, "final words") {
				t.Errorf("message %q…%q; want the early exit report of a cut tail", head(ae.Message, 120), lastRunes(ae.Message, 40))
			}
			if len(ae.Message) > 9<<10 {
				t.Errorf("message of %d bytes; the tail is 8 KiB", len(ae.Message))
			}
		}
		if growth > 256<<20 {
			t.Errorf("heap grew by %d MiB while 2 GiB of stderr went by", growth>>20)
		}
		t.Logf("2 GiB of stderr in %s; heap growth %d MiB", elapsed, growth>>20)
	})
	t.Run("memory/100MiB-line-discarded", func(t *testing.T) {
		var peak atomic.Uint64
		stop := sampleHeap(&peak)
		lineRefused(100 << 20)(t)
		if growth := stop(); growth > 128<<20 {
			t.Errorf("heap grew by %d MiB for a 100 MiB line", growth>>20)
		}
	})
	t.Run("flood/1e6-updates-between-turns", func(t *testing.T) {
		const n = 1_000_000
		r := newRig(t, "flood-between", itoa(n))
		r.mustStart()
		r.mustComplete("one")
		waitFor(t, "a million events", 60*time.Second, func() bool { return r.count(domain.EventOtherMessage, "reasoning block") >= n })
		r.mustComplete("two")
		if got := r.count(domain.EventOtherMessage, "reasoning block"); got != n {
			t.Errorf("%d reasoning events; want exactly %d", got, n)
		}
	})
}

// sampleHeap samples the heap until the returned function is called,
// which reports the peak growth over the starting heap.
func sampleHeap(peak *atomic.Uint64) func() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

// aliveOrUnreaped reports whether pid is still running (not a zombie).
func aliveOrUnreaped(pid int) bool { return proctest.Alive(pid) }
