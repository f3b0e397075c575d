package claude_measure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// syntheticModel is the model Claude Code writes on messages of its own
// making (an API error text, an interruption): no model call.
const syntheticModel = "<synthetic>"

// record is the part of a transcript line the source reads.
type record struct {
	Type     string `json:"type"`
	UUID     string `json:"uuid"`
	PromptID string `json:"promptId"`
	Message  *struct {
		ID         string          `json:"id"`
		Model      string          `json:"model"`
		StopReason *string         `json:"stop_reason"`
		Usage      json.RawMessage `json:"usage"`
	} `json:"message"`
}

// counters maps a message's usage (see the package documentation):
// Anthropic's input_tokens excludes the cached parts, so the total is the
// sum of the four.
func counters() journaltail.Counters {
	return journaltail.Counters{
		Input: "input_tokens", Output: "output_tokens",
		CacheRead: "cache_read_input_tokens", CacheWrite: "cache_creation_input_tokens",
		TotalOf: func(u domain.Usage) int64 {
			return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
		},
	}
}

// message is one model call as its last complete record gave it.
type message struct {
	usage domain.Usage
	model string
}

// turnRead is what scan found in a stretch of transcript.
type turnRead struct {
	keys       []string // counted messages, first seen first
	msgs       map[string]message
	terminal   bool   // the last assistant record ends a turn
	records    int    // assistant records of the turn read
	leftovers  int    // assistant records of an earlier prompt skipped
	consumed   int64  // bytes of complete lines read
	lastPrompt string // the last promptId seen
}

// sum adds the counted messages up; model is the last one's.
func (t turnRead) sum() (domain.Usage, string) {
	var u domain.Usage
	model := ""
	for _, k := range t.keys {
		m := t.msgs[k]
		u = u.Add(m.usage)
		model = m.model
	}
	return u, model
}

// scan reads the complete lines of data (a trailing line without its
// newline is left for later). prompt is the promptId of the last settled
// turn: assistant records that precede the last change of promptId are an
// earlier turn's and are skipped. Messages whose key is in counted were
// counted by an earlier turn. Each message key keeps its last record that
// carries every mapped counter.
func scan(data []byte, prompt string, counted map[string]bool) turnRead {
	t := turnRead{msgs: map[string]message{}, lastPrompt: prompt}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return t
	}
	t.consumed = int64(end + 1)
	var pos int64
	for line := range bytes.SplitSeq(data[:end], []byte{'\n'}) {
		at := pos
		pos += int64(len(line)) + 1
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var r record
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if r.Type == "user" && r.PromptID != "" && r.PromptID != t.lastPrompt {
			// A new prompt: what was read before it is an earlier turn's.
			t.leftovers += t.records
			t.records, t.terminal = 0, false
			t.keys, t.msgs = nil, map[string]message{}
			t.lastPrompt = r.PromptID
			continue
		}
		if r.Type != "assistant" || r.Message == nil {
			continue
		}
		t.records++
		stop := ""
		if r.Message.StopReason != nil {
			stop = *r.Message.StopReason
		}
		t.terminal = endsTurn(stop)
		if r.Message.Model == syntheticModel {
			continue
		}
		usage, _, complete := counters().Usage(r.Message.Usage)
		if !complete {
			continue
		}
		key := r.Message.ID
		switch {
		case key != "":
			key = "msg:" + key
		case r.UUID != "":
			key = "uuid:" + r.UUID
		default:
			key = "at:" + strconv.FormatInt(at, 10)
		}
		if counted[key] {
			continue
		}
		if _, seen := t.msgs[key]; !seen {
			t.keys = append(t.keys, key)
		}
		t.msgs[key] = message{usage: usage, model: r.Message.Model}
	}
	return t
}

// endsTurn reports whether a message's stop reason ends the turn: the
// model is not waiting on a tool result or a paused server tool.
func endsTurn(stop string) bool {
	switch stop {
	case "", "tool_use", "pause_turn":
		return false
	}
	return true
}

// readFrom reads path from offset to its end.
func readFrom(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// errUnsettled reports a turn whose records were read but did not settle
// within the wait.
var errUnsettled = errors.New("claude transcript source: the turn's records did not settle in time")

// TurnUsage waits, bounded by ctx, for the records of the turn that just
// ended on sessionID and sums them (see the package documentation).
func (m *measurement) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	if !journaltail.ValidID(sessionID) {
		return domain.Usage{}, "", false, fmt.Errorf("claude transcript source: unusable session id %q", sessionID)
	}
	st := m.state(sessionID)
	t0 := time.Now()
	tick := time.NewTicker(m.poll)
	defer tick.Stop()
	var (
		size    int64 = -1
		changed       = t0
		last    turnRead
	)
	for {
		if st.path == "" {
			st.path = m.find(sessionID)
		}
		if st.path != "" {
			data, err := readFrom(st.path, st.offset)
			switch {
			case err == nil:
				if n := int64(len(data)); n != size {
					size, changed = n, time.Now()
				}
				last = scan(data, st.lastPrompt, st.counted)
				// A line still without its newline is being written: wait
				// for it, unless it has stayed so for the settle time.
				quiet := time.Since(changed) >= m.settle
				pending := last.consumed < int64(len(data))
				if last.terminal && (!pending || quiet) || len(last.keys) > 0 && quiet {
					return m.settled(st, sessionID, last, t0)
				}
			case errors.Is(err, os.ErrNotExist):
				st.path = ""
			default:
				m.log.Debug("transcript not readable", "session_id", sessionID, "path", st.path, "error", err)
			}
		}
		select {
		case <-ctx.Done():
			m.log.Debug("turn unmeasured: the wait ended", "session_id", sessionID, "path", st.path,
				"records", last.records, "messages", len(last.keys), "waited", time.Since(t0))
			if len(last.keys) > 0 {
				return domain.Usage{}, "", false, errUnsettled
			}
			return domain.Usage{}, "", false, nil
		case <-tick.C:
		}
	}
}

// settled commits a settled turn: the next turn reads on from here and
// never counts these messages again.
func (m *measurement) settled(st *sessionState, sessionID string, t turnRead, t0 time.Time) (domain.Usage, string, bool, error) {
	st.offset += t.consumed
	st.lastPrompt = t.lastPrompt
	for _, k := range t.keys {
		st.counted[k] = true
	}
	u, model := t.sum()
	m.log.Debug("turn measured", "session_id", sessionID, "path", st.path, "messages", len(t.keys),
		"records", t.records, "skipped_earlier_records", t.leftovers, "final_stop", t.terminal,
		"model", model, "total_tokens", u.TotalTokens, "waited", time.Since(t0))
	if len(t.keys) == 0 {
		return domain.Usage{}, "", false, nil
	}
	return u, model, true, nil
}
