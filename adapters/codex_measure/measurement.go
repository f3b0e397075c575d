package codex_measure

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// fullSearchEvery bounds how often a wait searches every date folder for
// a rollout not found in the recent ones.
const fullSearchEvery = 500 * time.Millisecond

// measurement is one armed start of a Source.
type measurement struct {
	st  journaltail.Start
	now func() time.Time

	mu        sync.Mutex
	private   journaltail.Private
	sessionID string
	tail      journaltail.Tail // the rollout, once found
	floor     int64            // a turn opened before this offset is not the one asked for
	tr        tracker
	lastFull  time.Time
}

// Env is empty: the runtime keeps its own CODEX_HOME.
func (m *measurement) Env() []string { return nil }

// SessionOpened records the session the runtime runs. For a continued
// session whose rollout is already there, reading starts at its current
// size, the earlier part scanned only for the model and running total;
// when it is not found yet, records stamped before now are not counted.
func (m *measurement) SessionOpened(sessionID string, continued bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reset(sessionID)
	if !continued {
		return
	}
	if m.find(true) {
		m.read(false)
		m.floor = m.tail.Offset
		m.st.Log.Debug("codex rollout of a continued session: reading from its end",
			"session_id", sessionID, "path", m.tail.Path, "offset", m.tail.Offset)
		return
	}
	m.tr.countFrom = m.now()
	m.st.Log.Debug("codex rollout of a continued session not found yet; earlier records will not count",
		"session_id", sessionID)
}

// reset starts following sessionID from nothing.
func (m *measurement) reset(sessionID string) {
	m.sessionID = sessionID
	m.tail.Reset()
	m.floor = 0
	m.lastFull = time.Time{}
	m.tr = tracker{
		mismatch: func(t *turn, diff domain.Usage) {
			m.st.Log.Warn("codex rollout: a turn's per-call figures and its running-total difference disagree; the per-call figures are reported",
				"session_id", m.sessionID, "turn_id", t.id, "per_call", fmt.Sprintf("%+v", t.sum), "total_difference", fmt.Sprintf("%+v", diff))
		},
		incomplete: func(pos int64) {
			m.st.Log.Debug("codex rollout: a token_count record lacks a counter and does not count",
				"session_id", m.sessionID, "offset", pos)
		},
	}
}

// TurnUsage waits, bounded by ctx, for the end of the turn that just
// ended on sessionID and reports the sum of its token_count records'
// last_token_usage. ok is false with a nil error when the turn's end was
// read without a complete record; err is ctx's error when the wait ended
// first with nothing of the turn read.
func (m *measurement) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sessionID != m.sessionID {
		m.reset(sessionID)
	}
	defer func() { m.floor = m.tail.Offset }()
	// No settle rule: a turn ends on its end record, or at ctx's end.
	return m.private.Wait(ctx, &m.mu, (*rollout)(m), journaltail.Waiting{Poll: m.st.Poll, Log: m.st.Log, SessionID: sessionID})
}

// rollout is a measurement as journaltail.Wait's Turns.
type rollout measurement

// Poll reads what the rollout gained.
func (r *rollout) Poll() {
	m := (*measurement)(r)
	if m.find(false) {
		m.read(true)
	}
}

// TakeEnded hands the latest ended turn over, unless it opened before
// this wait's floor: an earlier turn whose wait had ended, discarded.
func (r *rollout) TakeEnded() (journaltail.Figures, bool) {
	t := r.tr.ended
	if t == nil {
		return journaltail.Figures{}, false
	}
	r.tr.ended = nil
	if t.startPos < r.floor {
		r.st.Log.Debug("codex rollout: discarded the figures of an earlier turn whose wait had ended",
			"session_id", r.sessionID, "turn_id", t.id)
		return journaltail.Figures{}, false
	}
	if t.records == 0 {
		r.st.Log.Debug("codex rollout: the turn ended without a complete token_count record",
			"session_id", r.sessionID, "turn_id", t.id)
	} else {
		r.st.Log.Debug("codex rollout: turn figures read", "session_id", r.sessionID, "turn_id", t.id, "records", t.records)
	}
	return r.figures(t), true
}

// TakeOpen reports the records read of a turn whose end was not read,
// once per turn: its end, read later, is then discarded.
func (r *rollout) TakeOpen() (journaltail.Figures, bool) {
	t := r.tr.open
	if t == nil || t.records == 0 || t.reported || t.startPos < r.floor {
		return journaltail.Figures{}, false
	}
	t.reported = true
	r.st.Log.Debug("codex rollout: the turn's end was not read in time; reporting the records read",
		"session_id", r.sessionID, "turn_id", t.id, "records", t.records)
	return r.figures(t), true
}

func (r *rollout) Grew() time.Time { return r.tail.Grew }
func (r *rollout) Released() bool  { return r.private.Released() }

// figures are a turn's, attributed to its own turn context's model, else
// the latest one read.
func (r *rollout) figures(t *turn) journaltail.Figures {
	model := t.model
	if model == "" {
		model = r.tr.model
	}
	return journaltail.Figures{Usage: t.sum, Model: model, Records: t.records}
}

// find locates the session's rollout, first in the date folders of
// yesterday, today and tomorrow, then (at most every fullSearchEvery,
// unless now) in every date folder. It reports whether the path is known.
func (m *measurement) find(now bool) bool {
	if m.tail.Path != "" {
		return true
	}
	if !journaltail.ValidID(m.sessionID) {
		return false
	}
	sessions := filepath.Join(m.st.Home, "sessions")
	name := "rollout-*-" + m.sessionID + ".jsonl"
	t := m.now()
	for _, d := range []time.Time{t.AddDate(0, 0, -1), t, t.AddDate(0, 0, 1)} {
		if p := latest(filepath.Join(sessions, d.Format("2006"), d.Format("01"), d.Format("02"), name)); p != "" {
			m.found(p)
			return true
		}
	}
	if !now && time.Since(m.lastFull) < fullSearchEvery {
		return false
	}
	m.lastFull = time.Now()
	if p := latest(filepath.Join(sessions, "*", "*", "*", name)); p != "" {
		m.found(p)
		return true
	}
	return false
}

func (m *measurement) found(p string) {
	m.tail.Path = p
	m.st.Log.Debug("codex rollout found", "session_id", m.sessionID, "path", p)
}

// latest is the last match of a glob in name order, or "".
func latest(pattern string) string {
	matches, err := filepath.Glob(pattern)
	if err != nil || len(matches) == 0 {
		return ""
	}
	sort.Strings(matches)
	return matches[len(matches)-1]
}

// read processes the whole lines written since the last read; counting
// false scans them only for the model and the running total.
func (m *measurement) read(counting bool) {
	m.tail.Read(func(pos int64, line []byte) { m.tr.line(line, pos, counting) })
}

// Release removes the temporary directory. It may be called more than
// once.
func (m *measurement) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.private.Remove()
}
