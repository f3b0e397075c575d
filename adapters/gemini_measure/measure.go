package gemini_measure

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// measurement is one armed start of the source.
type measurement struct {
	st      journaltail.Start
	outfile string

	mu      sync.Mutex
	private journaltail.Private
	session string
	out     objectReader
	pending []apiResponse   // this session's records not yet given to a turn
	done    map[string]bool // prompt ids whose turn is over
}

// Env is the environment that turns Gemini CLI's local telemetry on.
func (m *measurement) Env() []string {
	return []string{
		"GEMINI_TELEMETRY_ENABLED=true",
		"GEMINI_TELEMETRY_TARGET=local",
		"GEMINI_TELEMETRY_OUTFILE=" + m.outfile,
		"GEMINI_TELEMETRY_USE_COLLECTOR=false",
		"GEMINI_TELEMETRY_LOG_PROMPTS=false",
	}
}

// SessionOpened starts reading the outfile at its current end for
// sessionID: whatever was written before belongs to no turn of it.
func (m *measurement) SessionOpened(sessionID string, continued bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.session = sessionID
	m.out = objectReader{path: m.outfile, offset: size(m.outfile)}
	m.pending = nil
	m.st.Log.Debug("gemini telemetry session opened", "session_id", sessionID, "continued", continued, "offset", m.out.offset)
}

// apiResponse is one gemini_cli.api_response record that carries every
// counter mapped.
type apiResponse struct {
	promptID string
	role     string
	model    string
	usage    domain.Usage
}

// logAttributes are the attributes of a telemetry log record read here;
// its counters are read by telemetryCounters.
type logAttributes struct {
	Event     string `json:"event.name"`
	SessionID string `json:"session.id"`
	PromptID  string `json:"prompt_id"`
	Role      string `json:"role"`
}

// counters maps a model call's counters, the same in the outfile and the
// journal but for their names (see the package documentation).
func counters(input, output, cached, thoughts, tool, total, model string) journaltail.Counters {
	return journaltail.Counters{Input: input, Output: output, CacheRead: cached,
		Reasoning: thoughts, ToolUse: tool, Total: total, Model: model,
		Meaning: domain.UsageMeaning{InputIncludesCache: true, OutputExcludesReasoning: true}}
}

// telemetryCounters maps an api_response record's attributes.
func telemetryCounters() journaltail.Counters {
	return counters("input_token_count", "output_token_count", "cached_content_token_count",
		"thoughts_token_count", "tool_token_count", "total_token_count", "model")
}

// eventAPIResponse is the event name of a model call's response record.
const eventAPIResponse = "gemini_cli.api_response"

// roleMain is the role of the turn's own model calls.
const roleMain = "main"

// parseRecord reads one value of the outfile: log reports whether it is a
// log record (attributes with an event name); rec is set when it is a
// complete api_response record.
func parseRecord(raw json.RawMessage) (log bool, rec *apiResponse, session string) {
	var obj struct {
		Attributes json.RawMessage `json:"attributes"`
	}
	if json.Unmarshal(raw, &obj) != nil || len(obj.Attributes) == 0 {
		return false, nil, ""
	}
	var a logAttributes
	if json.Unmarshal(obj.Attributes, &a) != nil || a.Event == "" {
		// A span's attributes carry no event name; attributes of
		// unexpected types make the record not count.
		var probe struct {
			Event string `json:"event.name"`
		}
		_ = json.Unmarshal(obj.Attributes, &probe)
		return probe.Event != "", nil, ""
	}
	if a.Event != eventAPIResponse || a.SessionID == "" {
		return true, nil, ""
	}
	u, model, ok := telemetryCounters().Usage(obj.Attributes)
	if !ok {
		return true, nil, a.SessionID
	}
	return true, &apiResponse{promptID: a.PromptID, role: a.Role, model: model, usage: u}, a.SessionID
}

// readOutfile reads the records written since the last read; caughtUp is
// true when a log record starting at or after from was read.
func (m *measurement) readOutfile(sessionID string, from int64) (caughtUp bool, err error) {
	err = m.out.read(func(start int64, raw json.RawMessage) {
		log, rec, sid := parseRecord(raw)
		if log && start >= from {
			caughtUp = true
		}
		switch {
		case sid != sessionID:
		case rec == nil:
			m.st.Log.Debug("gemini telemetry: api_response without every counter; not counted", "session_id", sid)
		case m.done[rec.promptID]:
			m.st.Log.Debug("gemini telemetry: late record of an earlier turn; not counted", "prompt_id", rec.promptID)
		default:
			m.pending = append(m.pending, *rec)
		}
	})
	return caughtUp, err
}

// TurnUsage waits for the outfile to catch up with the turn that just
// ended on sessionID, bounded by ctx, and sums its records; the session
// journal is read when the outfile did not catch up or had nothing for
// the turn, and the larger total wins.
func (m *measurement) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == "" {
		m.session = sessionID
		m.out = objectReader{path: m.outfile}
	}
	began := time.Now()
	from := size(m.outfile)
	settled := false
	var readErr error
	tick := time.NewTicker(m.st.Poll)
	defer tick.Stop()
wait:
	for {
		caughtUp, err := m.readOutfile(sessionID, from)
		if err != nil {
			readErr = err
		}
		if caughtUp || time.Since(began) >= m.st.Settle {
			settled = true
			break
		}
		select {
		case <-ctx.Done():
			break wait
		case <-tick.C:
		}
	}
	usage, model, ok := m.takeTurn()
	m.st.Log.Debug("gemini telemetry read", "session_id", sessionID, "settled", settled, "measured", ok,
		"total_tokens", usage.TotalTokens, "waited", time.Since(began))
	if !settled || !ok {
		ju, jmodel, jok := readJournal(m.st.Home, sessionID)
		m.st.Log.Debug("gemini session journal read", "session_id", sessionID, "measured", jok, "total_tokens", ju.TotalTokens)
		if jok && (!ok || ju.TotalTokens > usage.TotalTokens) {
			usage, model, ok = ju, jmodel, true
		}
	}
	if !ok && readErr != nil {
		return domain.Usage{}, "", false, readErr
	}
	return usage, model, ok, nil
}

// takeTurn sums the pending records of the newest prompt (see the package
// doc) and marks every pending prompt done.
func (m *measurement) takeTurn() (domain.Usage, string, bool) {
	pending := m.pending
	m.pending = nil
	mains := map[string]bool{}
	prompt := ""
	for _, r := range pending {
		if r.role == roleMain {
			mains[r.promptID] = true
			prompt = r.promptID
		}
	}
	var (
		sum       domain.Usage
		model     string
		mainModel string
		n         int
	)
	for _, r := range pending {
		if r.promptID != prompt && mains[r.promptID] {
			continue // an earlier prompt's record
		}
		sum = sum.Add(r.usage)
		n++
		model = r.model
		if r.role == roleMain {
			mainModel = r.model
		}
	}
	for _, r := range pending {
		m.done[r.promptID] = true
	}
	if mainModel != "" {
		model = mainModel
	}
	return sum, model, n > 0
}

// Release removes the armed directory.
func (m *measurement) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.private.Remove()
}
