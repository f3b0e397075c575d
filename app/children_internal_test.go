package app

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// withChildren makes the recording stream follow child sessions.
func withChildren(r *recordingStream) *recordingStream {
	r.kids = newChildren(r.eventStream, r.log)
	return r
}

func announce(id, state string) string {
	return `{"sessionUpdate":"subagent_update","sessionId":"` + id + `","title":"t-` + id + `","capabilities":{"cancel":{}},"state":{"state":"` + state + `"}}`
}

func (r *recordingStream) ofChild(id string, typ domain.EventType) []domain.Event {
	var out []domain.Event
	for _, ev := range r.ofType(typ) {
		if ev.SessionID == id {
			out = append(out, ev)
		}
	}
	return out
}

// TestChildCapCountsChildrenAliveAtOnce: the bound of maxChildren counts
// the children working at once. Children that ended leave the count (the
// oldest ended record is forgotten for a new child), so a long session
// follows its 300th child; the records kept stay within the bound; with
// maxChildren working at once, one more is not followed.
func TestChildCapCountsChildrenAliveAtOnce(t *testing.T) {
	t.Parallel()
	r := withChildren(newRecordingStream(t))
	for i := range maxChildren + 44 {
		id := fmt.Sprintf("c-%d", i)
		r.send(announce(id, "running"))
		r.send(`{"sessionUpdate":"subagent_update","sessionId":"` + id + `","state":{"state":"idle","stopReason":"end_turn"}}`)
	}
	last := fmt.Sprintf("c-%d", maxChildren+43)
	require.Len(t, r.ofChild(last, domain.EventChildStarted), 1, "an ended child leaves the count")
	r.sendFor(last, chunk("m", "still followed"))
	r.flush()
	assert.Len(t, r.ofChild(last, domain.EventMessageChunk), 1)
	assert.Len(t, r.kids.snapshot(), maxChildren, "the records kept are bounded")
	assert.Nil(t, r.kids.get("c-0"), "the oldest ended child is forgotten first")

	w := withChildren(newRecordingStream(t))
	for i := range maxChildren + 1 {
		w.send(announce(fmt.Sprintf("w-%d", i), "running"))
	}
	assert.Len(t, w.ofType(domain.EventChildStarted), maxChildren, "working children count")
	assert.Nil(t, w.kids.get(fmt.Sprintf("w-%d", maxChildren)))
	// One ends: the next child is followed.
	w.send(`{"sessionUpdate":"subagent_update","sessionId":"w-7","state":{"state":"idle","stopReason":"end_turn"}}`)
	w.send(announce("w-new", "running"))
	assert.NotNil(t, w.kids.get("w-new"))
	assert.Nil(t, w.kids.get("w-7"))
}

// TestToolCallStartedAgainRestartsItsClock: a tool_call re-sent for an id
// still open starts the call again: its duration counts from the latest
// start; a tool_call_update does not restart it.
func TestToolCallStartedAgainRestartsItsClock(t *testing.T) {
	t.Parallel()
	r := newRecordingStream(t)
	r.send(`{"sessionUpdate":"tool_call","toolCallId":"x","title":"run","kind":"execute","status":"in_progress"}`)
	r.clock.Advance(5 * time.Second)
	r.send(`{"sessionUpdate":"tool_call","toolCallId":"x","title":"run again","kind":"execute","status":"pending"}`)
	r.clock.Advance(time.Second)
	r.send(toolUpdate("tool_call_update", "x", "in_progress", ""))
	r.clock.Advance(time.Second)
	r.send(toolUpdate("tool_call_update", "x", "completed", ""))
	res := r.ofType(domain.EventToolResult)
	require.Len(t, res, 1)
	assert.Equal(t, int64(2000), res[0].ToolDurationMS, "counted from the second start")
	assert.Equal(t, "run again", res[0].ToolTitle)
}

// TestEnvelopeThatDoesNotDecodeIsMalformed: a session/update whose
// envelope does not decode names no session that can be known: it is a
// malformed event, not another session's update.
func TestEnvelopeThatDoesNotDecodeIsMalformed(t *testing.T) {
	t.Parallel()
	r := newRecordingStream(t)
	r.update(json.RawMessage(`{"sessionId":7,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`))
	r.update(json.RawMessage(`[1,2]`))
	assert.Equal(t, []string{"malformed:" + domain.MsgUnknownUpdate, "malformed:" + domain.MsgUnknownUpdate}, r.shape())
}

// TestChildLedgerIsItsOwn: a child's usage_update feeds the child's ledger
// and never the parent's.
func TestChildLedgerIsItsOwn(t *testing.T) {
	t.Parallel()
	r := withChildren(newRecordingStream(t))
	r.ledger.begin()
	r.send(`{"sessionUpdate":"usage_update","used":600,"size":100000,"cost":{"amount":0.3,"currency":"USD"}}`)
	r.send(announce("c-1", "running"))
	r.sendFor("c-1", `{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":2,"currency":"USD"}}`)
	cost, used, changed := r.ledger.end()
	assert.False(t, changed)
	assert.Equal(t, &domain.Cost{Amount: 0.3, Currency: "USD"}, cost)
	assert.Equal(t, &domain.ContextUsage{Used: 600, Size: 100000, Cost: cost}, used)
	assert.Equal(t, &domain.ContextUsage{Used: 1200, Size: 200000, Cost: &domain.Cost{Amount: 2, Currency: "USD"}},
		r.kids.snapshot()[0].Context)
}
