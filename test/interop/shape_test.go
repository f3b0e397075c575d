//go:build interop

package interop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

// Event sequences are written as the recorder's shape (eventrec.Shape), but
// compared with what acpdrive guarantees and nothing the runtime does not:
//
//   - Everything before the first session_started (a replay by
//     session/load) is compared exactly.
//   - Each turn, from its session_started, opens with session_started and,
//     when the wanted turn has one, the capability notice right after it,
//     and ends with its outcome event; both are exact.
//   - Between them, acpdrive's own events (its notices, tool results,
//     reasoning and plan events, malformed input) must all be there, each as
//     often as wanted, in any order: the runtime chooses how its text, its
//     tool updates and its permission requests interleave. A wanted
//     tool_result written "tool_result:<tool>:<ok|error>" (no third colon)
//     compares on its tool name and error flag only; one written with a
//     message compares exactly.
//   - The agent's text compares as one string: a runtime may split a reply
//     into messages (by messageId, or by a tool update between chunks) or
//     not, and the text notifications, concatenated in order, must be the
//     wanted text exactly.
//   - Keep-alive notifications ("message_chunk*") may appear anywhere
//     between the head and the outcome, or not at all.
//   - The events of the session's state and the runtime's notices
//     (commands_available, mode_changed, config_options, session_info,
//     context_usage, runtime_notice) are the runtime's to send when it
//     likes, before a turn, within one or after it: they are left out of
//     the comparison (the reply text must still be exactly the wanted
//     one, so a notice rendered as reply text fails).
//   - A token_usage event is compared only in a turn that wants one: a
//     runtime whose turn end carries usage is measured from it.
//   - What is causal is kept in order: text the model can only write after
//     it learnt of acpdrive's answer to a permission request (wanted after
//     a permission notice) must come after that notice.
//
// Anything else — a missing event, an extra one, other text — fails.

// keepAlive is the collapsed run of empty notifications.
const keepAlive = "message_chunk*"

// acpdriveNotices are the notifications acpdrive itself emits in a turn;
// every other notification message is the agent's text.
var acpdriveNotices = []string{
	domain.MsgPermissionRefused,
	domain.MsgPermissionUngrantable,
	domain.MsgElicitation,
	domain.MsgToolServersGated,
}

// permissionNotices are the notices acpdrive emits when it answers a
// permission request: the runtime learns the answer only then.
var permissionNotices = []string{domain.MsgPermissionRefused, domain.MsgToolServersGated}

// agentText returns the text of an agent message entry of a shape.
func agentText(entry string) (string, bool) {
	msg, ok := strings.CutPrefix(entry, "notification:")
	if !ok || strings.HasPrefix(msg, domain.MsgCapabilityGapNotice) || slices.Contains(acpdriveNotices, msg) {
		return "", false
	}
	return msg, true
}

// toolMatches reports whether a tool_result entry of a shape matches a
// wanted one: exactly, or on name and error flag when want has no message.
func toolMatches(want, got string) bool {
	if strings.Count(want, ":") >= 3 {
		return want == got
	}
	return strings.HasPrefix(got, want+":")
}

// eventProblems compares acpdrive's events of two turn bodies as
// multisets, tool results by toolMatches.
func eventProblems(want, got []string) []string {
	var wantEv, gotEv, wantTools, gotTools []string
	for _, e := range want {
		if _, text := agentText(e); text || e == keepAlive {
			continue
		}
		if strings.HasPrefix(e, "tool_result:") {
			wantTools = append(wantTools, e)
		} else {
			wantEv = append(wantEv, e)
		}
	}
	for _, e := range got {
		if _, text := agentText(e); text || e == keepAlive {
			continue
		}
		if strings.HasPrefix(e, "tool_result:") {
			gotTools = append(gotTools, e)
		} else {
			gotEv = append(gotEv, e)
		}
	}
	if !slices.Contains(wantEv, string(domain.EventTokenUsage)) {
		// Whether a turn is measured from the protocol is the runtime's:
		// its turn end carries usage or not (docs/behaviour.md#token-accounting).
		// A token_usage not wanted is left out; a wanted one must be there.
		gotEv = slices.DeleteFunc(gotEv, func(e string) bool { return e == string(domain.EventTokenUsage) })
	}
	var out []string
	slices.Sort(wantEv)
	slices.Sort(gotEv)
	if !slices.Equal(wantEv, gotEv) {
		out = append(out, fmt.Sprintf("events (any order): want %q, got %q", wantEv, gotEv))
	}
	// Wanted tool results with a message first: they match one entry only.
	slices.SortStableFunc(wantTools, func(a, b string) int {
		return strings.Count(b, ":") - strings.Count(a, ":")
	})
	left := slices.Clone(gotTools)
	var missing []string
	for _, w := range wantTools {
		i := slices.IndexFunc(left, func(g string) bool { return toolMatches(w, g) })
		if i < 0 {
			missing = append(missing, w)
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	if len(missing) > 0 || len(left) > 0 {
		out = append(out, fmt.Sprintf("tool results: missing %q, unexpected %q", missing, left))
	}
	return out
}

// isPermissionNotice reports whether entry is a permission answer notice.
func isPermissionNotice(entry string) bool {
	msg, ok := strings.CutPrefix(entry, "notification:")
	return ok && slices.Contains(permissionNotices, msg)
}

// splitTurns cuts a shape into what precedes the first session_started and
// the turns, each starting with its session_started.
func splitTurns(shape []string) (before []string, turns [][]string) {
	i := slices.Index(shape, started)
	if i < 0 {
		return shape, nil
	}
	before = shape[:i]
	for _, e := range shape[i:] {
		if e == started {
			turns = append(turns, nil)
		}
		turns[len(turns)-1] = append(turns[len(turns)-1], e)
	}
	return before, turns
}

// assertShape asserts that got matches want under the rules above.
func assertShape(t *testing.T, want, got []string, msgAndArgs ...any) bool {
	t.Helper()
	problems := shapeProblems(want, got)
	if len(problems) == 0 {
		return true
	}
	return assert.Fail(t, fmt.Sprintf("event sequence does not match:\n  %s\nwant: %q\ngot:  %q",
		strings.Join(problems, "\n  "), want, got), msgAndArgs...)
}

// stateEvents are the event types the comparison leaves out. A
// permission_decision comes with every answered permission request, beside
// the notice a refusal draws (which is compared); the decisions themselves
// are asserted by the permission policy's tests (permissions_test.go).
var stateEvents = []domain.EventType{
	domain.EventCommandsAvailable, domain.EventModeChanged, domain.EventConfigOptions,
	domain.EventSessionInfo, domain.EventContextUsage, domain.EventRuntimeNotice,
	domain.EventPermissionDecision,
}

// withoutState drops the entries of stateEvents from a shape.
func withoutState(shape []string) []string {
	return slices.DeleteFunc(slices.Clone(shape), func(e string) bool {
		typ, _, _ := strings.Cut(e, ":")
		return slices.Contains(stateEvents, domain.EventType(typ))
	})
}

// shapeProblems lists how got departs from want; none when it matches.
func shapeProblems(want, got []string) []string {
	want, got = withoutState(want), withoutState(got)
	wantBefore, wantTurns := splitTurns(want)
	gotBefore, gotTurns := splitTurns(got)
	var out []string
	if !slices.Equal(wantBefore, gotBefore) {
		out = append(out, fmt.Sprintf("before the first turn: want %q, got %q", wantBefore, gotBefore))
	}
	if len(wantTurns) != len(gotTurns) {
		return append(out, fmt.Sprintf("want %d turns, got %d", len(wantTurns), len(gotTurns)))
	}
	for i := range wantTurns {
		for _, p := range turnProblems(wantTurns[i], gotTurns[i]) {
			out = append(out, fmt.Sprintf("turn %d: %s", i+1, p))
		}
	}
	return out
}

// turnProblems compares one turn (session_started through its outcome).
func turnProblems(want, got []string) []string {
	var out []string
	head := 1
	if len(want) > 1 && strings.HasPrefix(want[1], "notification:"+domain.MsgCapabilityGapNotice) {
		head = 2
	}
	if len(want) < head+1 {
		return []string{fmt.Sprintf("malformed want %q", want)}
	}
	if len(got) < head+1 {
		return []string{fmt.Sprintf("too short: %q", got)}
	}
	if !slices.Equal(want[:head], got[:head]) {
		out = append(out, fmt.Sprintf("head: want %q, got %q", want[:head], got[:head]))
	}
	if w, g := want[len(want)-1], got[len(got)-1]; w != g {
		out = append(out, fmt.Sprintf("outcome: want %q, got %q", w, g))
	}
	wantBody, gotBody := want[head:len(want)-1], got[head:len(got)-1]

	// acpdrive's events, as multisets.
	out = append(out, eventProblems(wantBody, gotBody)...)

	// The agent's text, concatenated.
	text := func(body []string) string {
		var b strings.Builder
		for _, e := range body {
			if s, ok := agentText(e); ok {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	if w, g := text(wantBody), text(gotBody); w != g {
		out = append(out, fmt.Sprintf("agent text: want %q, got %q", w, g))
	}

	// Causal order: text wanted after a permission notice comes after it.
	firstNotice := slices.IndexFunc(gotBody, isPermissionNotice)
	seenNotice := false
	for _, e := range wantBody {
		if isPermissionNotice(e) {
			seenNotice = true
			continue
		}
		s, ok := agentText(e)
		if !ok || !seenNotice || firstNotice < 0 {
			continue
		}
		at := slices.IndexFunc(gotBody, func(g string) bool {
			gs, ok := agentText(g)
			return ok && strings.Contains(gs, s)
		})
		if at >= 0 && at < firstNotice {
			out = append(out, fmt.Sprintf("text %q came before the permission answer it depends on", s))
		}
	}
	return out
}

// TestShapeMatcher pins the comparison rules on made-up sequences.
func TestShapeMatcher(t *testing.T) {
	t.Parallel()
	gaps := gapNotice(domain.CapTokenCounts)
	want := []string{started, gaps, keepAlive, "notification:Let me write the file.", refused,
		"tool_result:execute:error", keepAlive, "notification:I did not write the file.", "turn_completed"}
	ok := map[string][]string{
		"in the wanted order": {started, gaps, keepAlive, "notification:Let me write the file.", refused,
			"tool_result:execute:error:", keepAlive, "notification:I did not write the file.", "turn_completed"},
		"text after the permission request, merged": {started, gaps, refused, keepAlive,
			"tool_result:execute:error:echo", keepAlive, "notification:Let me write the file.I did not write the file.", "turn_completed"},
		"tool result last, no keep-alives": {started, gaps, "notification:Let me write the file.", refused,
			"notification:I did not write the file.", "tool_result:execute:error:", "turn_completed"},
		"state events and notices anywhere": {"commands_available:web", started, gaps, keepAlive, "context_usage:1 of 2 context tokens (50.0%)",
			keepAlive, "notification:Let me write the file.", "runtime_notice:warning", refused, "session_info:Write a file",
			"tool_result:execute:error:", keepAlive, "notification:I did not write the file.", "mode_changed:code", "turn_completed"},
	}
	for name, got := range ok {
		assert.Empty(t, shapeProblems(want, got), name)
	}
	bad := map[string][]string{
		"refusal missing": {started, gaps, "notification:Let me write the file.",
			"tool_result:execute:error:", "notification:I did not write the file.", "turn_completed"},
		"refusal twice": {started, gaps, "notification:Let me write the file.", refused, refused,
			"tool_result:execute:error:", "notification:I did not write the file.", "turn_completed"},
		"tool result ok": {started, gaps, "notification:Let me write the file.", refused,
			"tool_result:execute:ok:", "notification:I did not write the file.", "turn_completed"},
		"reply before the refusal": {started, gaps, "notification:Let me write the file.",
			"notification:I did not write the file.", refused, "tool_result:execute:error:", "turn_completed"},
		"other text": {started, gaps, "notification:Let me write the file.", refused,
			"tool_result:execute:error:", "notification:I wrote the file.", "turn_completed"},
		"no gap notice": {started, "notification:Let me write the file.", refused,
			"tool_result:execute:error:", "notification:I did not write the file.", "turn_completed"},
		"other outcome": {started, gaps, "notification:Let me write the file.", refused,
			"tool_result:execute:error:", "notification:I did not write the file.", "turn_failed:x"},
		"extra event": {started, gaps, "notification:Let me write the file.", refused, "malformed:x",
			"tool_result:execute:error:", "notification:I did not write the file.", "turn_completed"},
		"two turns": append(slices.Clone(want), started, "turn_completed"),
		"a notice as reply text": {started, gaps, "notification:Let me write the file.", refused,
			"tool_result:execute:error:", "notification:I did not write the file.warning", "turn_completed"},
	}
	for name, got := range bad {
		assert.NotEmpty(t, shapeProblems(want, got), name)
	}
	titled := []string{started, "tool_result:other:ok:note", "tool_result:other:ok", "turn_completed"}
	assert.Empty(t, shapeProblems(titled, []string{started, "tool_result:other:ok:x", "tool_result:other:ok:note", "turn_completed"}))
	assert.NotEmpty(t, shapeProblems(titled, []string{started, "tool_result:other:ok:x", "tool_result:other:ok:y", "turn_completed"}), "title differs")
	assert.NotEmpty(t, shapeProblems(titled, []string{started, "tool_result:other:ok:note", "turn_completed"}), "one missing")
	replay := []string{keepAlive, "notification:first", started, gaps, "notification:second", "turn_completed"}
	assert.Empty(t, shapeProblems(replay, replay))
	assert.NotEmpty(t, shapeProblems(replay, replay[2:]), "replay missing")
}
