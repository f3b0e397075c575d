package codex_measure

import (
	"encoding/json"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// The rollout's record shapes, as far as the source reads them.

// rolloutLine is one line of a rollout file.
type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// Record types and event_msg payload types the source reads.
const (
	lineTurnContext = "turn_context"
	lineEvent       = "event_msg"

	eventTaskStarted  = "task_started"
	eventTaskComplete = "task_complete"
	eventTurnAborted  = "turn_aborted"
	eventTokenCount   = "token_count"
)

// eventPayload is an event_msg's payload.
type eventPayload struct {
	Type   string `json:"type"`
	TurnID string `json:"turn_id"`
	Info   *struct {
		Total *counters `json:"total_token_usage"`
		Last  *counters `json:"last_token_usage"`
	} `json:"info"`
}

// turnContextPayload is a turn_context's payload.
type turnContextPayload struct {
	TurnID string `json:"turn_id"`
	Model  string `json:"model"`
}

// counters is one token usage object as written; a nil field was absent.
type counters struct {
	Input     *int64 `json:"input_tokens"`
	Cached    *int64 `json:"cached_input_tokens"`
	Output    *int64 `json:"output_tokens"`
	Reasoning *int64 `json:"reasoning_output_tokens"`
	Total     *int64 `json:"total_tokens"`
}

// figures is a complete counters object.
type figures struct {
	Input, Cached, Output, Reasoning, Total int64
}

// complete returns the figures when every counter the source maps is
// present.
func (c *counters) complete() (figures, bool) {
	if c == nil || c.Input == nil || c.Cached == nil || c.Output == nil || c.Reasoning == nil || c.Total == nil {
		return figures{}, false
	}
	return figures{Input: *c.Input, Cached: *c.Cached, Output: *c.Output, Reasoning: *c.Reasoning, Total: *c.Total}, true
}

func (f figures) add(g figures) figures {
	return figures{Input: f.Input + g.Input, Cached: f.Cached + g.Cached, Output: f.Output + g.Output,
		Reasoning: f.Reasoning + g.Reasoning, Total: f.Total + g.Total}
}

func (f figures) sub(g figures) figures {
	return figures{Input: f.Input - g.Input, Cached: f.Cached - g.Cached, Output: f.Output - g.Output,
		Reasoning: f.Reasoning - g.Reasoning, Total: f.Total - g.Total}
}

// usage maps the figures onto domain.Usage (see the package
// documentation).
func (f figures) usage() domain.Usage {
	return domain.Usage{
		InputTokens:     f.Input,
		OutputTokens:    f.Output,
		CacheReadTokens: f.Cached,
		ReasoningTokens: f.Reasoning,
		TotalTokens:     f.Total,
	}
}

// turn is one turn as read from the rollout.
type turn struct {
	id       string
	startPos int64 // offset of the line that opened it
	sum      figures
	records  int // complete token_count records
	model    string
	// before and after are the running totals before the turn and at its
	// last record, when known.
	before, after *figures
	// reported is set when the turn's figures were reported before its
	// end was read; its end is then discarded.
	reported bool
}

// tracker follows the records of one rollout file.
type tracker struct {
	model     string   // the latest turn_context's model
	lastTotal *figures // the latest complete total_token_usage
	open      *turn    // the turn being read
	ended     *turn    // the latest ended turn not yet reported
	// countFrom, when not zero, makes records stamped before it count for
	// nothing but the model and the running total (a continued session
	// whose rollout was found only after it opened).
	countFrom time.Time
	// mismatch is called when a turn's per-call sum and its running-total
	// difference disagree.
	mismatch func(t *turn, diff figures)
	// incomplete is called for a token_count that lacks a counter.
	incomplete func(pos int64)
}

// line processes one complete line that started at offset pos. counting
// false scans only for the model and the running total.
func (tr *tracker) line(raw []byte, pos int64, counting bool) {
	var l rolloutLine
	if json.Unmarshal(raw, &l) != nil {
		return
	}
	if counting && !tr.countFrom.IsZero() {
		if ts, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil && ts.Before(tr.countFrom) {
			counting = false
		}
	}
	switch l.Type {
	case lineTurnContext:
		var p turnContextPayload
		if json.Unmarshal(l.Payload, &p) != nil || p.Model == "" {
			return
		}
		tr.model = p.Model
		if counting && tr.open != nil && (p.TurnID == "" || tr.open.id == "" || p.TurnID == tr.open.id) {
			tr.open.model = p.Model
		}
	case lineEvent:
		var p eventPayload
		if json.Unmarshal(l.Payload, &p) != nil {
			return
		}
		tr.event(p, pos, counting)
	}
}

func (tr *tracker) event(p eventPayload, pos int64, counting bool) {
	switch p.Type {
	case eventTaskStarted:
		if counting {
			tr.open = &turn{id: p.TurnID, startPos: pos, before: tr.lastTotal}
		}
	case eventTokenCount:
		if p.Info == nil {
			return // a rate-limit update: no record
		}
		total, hasTotal := p.Info.Total.complete()
		last, hasLast := p.Info.Last.complete()
		if counting {
			switch {
			case !hasLast:
				if tr.incomplete != nil {
					tr.incomplete(pos)
				}
			default:
				if tr.open == nil {
					// A build that writes no task_started: the turn opens
					// at its first record.
					tr.open = &turn{startPos: pos, before: tr.lastTotal}
				}
				tr.open.sum = tr.open.sum.add(last)
				tr.open.records++
			}
		}
		if hasTotal {
			tr.lastTotal = &total
			if counting && tr.open != nil {
				tr.open.after = &total
			}
		} else if counting && tr.open != nil {
			tr.open.before = nil // the difference can no longer be taken
		}
	case eventTaskComplete, eventTurnAborted:
		if !counting {
			return
		}
		t := tr.open
		tr.open = nil
		if t == nil {
			t = &turn{id: p.TurnID, startPos: pos}
		}
		if t.reported {
			return
		}
		tr.check(t)
		tr.ended = t
	}
}

// check compares a turn's per-call sum with its running-total difference.
func (tr *tracker) check(t *turn) {
	if t.records == 0 || t.before == nil || t.after == nil || tr.mismatch == nil {
		return
	}
	if diff := t.after.sub(*t.before); diff != t.sum {
		tr.mismatch(t, diff)
	}
}
