package codex_measure

import (
	"encoding/json"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// The rollout's record shapes, as far as the source reads them.

// rolloutLine is one line of a rollout file.
type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// eventPayload is an event_msg's payload.
type eventPayload struct {
	Type   string `json:"type"`
	TurnID string `json:"turn_id"`
	Info   *struct {
		Total json.RawMessage `json:"total_token_usage"`
		Last  json.RawMessage `json:"last_token_usage"`
	} `json:"info"`
}

// turnContextPayload is a turn_context's payload.
type turnContextPayload struct {
	TurnID string `json:"turn_id"`
	Model  string `json:"model"`
}

// figures reads one token usage object (see the package documentation);
// ok is false when it lacks a counter the source maps.
func figures(obj json.RawMessage) (domain.Usage, bool) {
	c := journaltail.Counters{
		Input: "input_tokens", CacheRead: "cached_input_tokens", Output: "output_tokens",
		Reasoning: "reasoning_output_tokens", Total: "total_tokens",
		Meaning: domain.UsageMeaning{InputIncludesCache: true},
	}
	u, _, ok := c.Usage(obj)
	return u, ok
}

// minus is u less v, figure by figure.
func minus(u, v domain.Usage) domain.Usage {
	return domain.Usage{
		InputTokens: u.InputTokens - v.InputTokens, CacheReadTokens: u.CacheReadTokens - v.CacheReadTokens,
		OutputTokens: u.OutputTokens - v.OutputTokens, ReasoningTokens: u.ReasoningTokens - v.ReasoningTokens,
		TotalTokens: u.TotalTokens - v.TotalTokens,
	}
}

// turn is one turn as read from the rollout.
type turn struct {
	id       string
	startPos int64 // offset of the line that opened it
	sum      domain.Usage
	records  int // complete token_count records
	model    string
	// before and after are the running totals before the turn and at its
	// last record, when known.
	before, after *domain.Usage
	// reported is set when the turn's figures were reported before its
	// end was read; its end is then discarded.
	reported bool
}

// tracker follows the records of one rollout file.
type tracker struct {
	model     string        // the latest turn_context's model
	lastTotal *domain.Usage // the latest complete total_token_usage
	open      *turn         // the turn being read
	ended     *turn         // the latest ended turn not yet reported
	// countFrom, when not zero, makes records stamped before it count for
	// nothing but the model and the running total (a continued session
	// whose rollout was found only after it opened).
	countFrom time.Time
	// mismatch is called when a turn's per-call sum and its running-total
	// difference disagree.
	mismatch func(t *turn, diff domain.Usage)
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
	case "turn_context":
		var p turnContextPayload
		if json.Unmarshal(l.Payload, &p) != nil || p.Model == "" {
			return
		}
		tr.model = p.Model
		if counting && tr.open != nil && (p.TurnID == "" || tr.open.id == "" || p.TurnID == tr.open.id) {
			tr.open.model = p.Model
		}
	case "event_msg":
		var p eventPayload
		if json.Unmarshal(l.Payload, &p) != nil {
			return
		}
		tr.event(p, pos, counting)
	}
}

func (tr *tracker) event(p eventPayload, pos int64, counting bool) {
	switch p.Type {
	case "task_started":
		if counting {
			tr.open = &turn{id: p.TurnID, startPos: pos, before: tr.lastTotal}
		}
	case "token_count":
		if p.Info == nil {
			return // a rate-limit update: no record
		}
		total, hasTotal := figures(p.Info.Total)
		last, hasLast := figures(p.Info.Last)
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
				tr.open.sum = tr.open.sum.Add(last)
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
	case "task_complete", "turn_aborted":
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
	if diff := minus(*t.after, *t.before); diff != t.sum {
		tr.mismatch(t, diff)
	}
}
