package codex_measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// fullSearchEvery bounds how often a wait searches every date folder for
// a rollout not found in the recent ones.
const fullSearchEvery = 500 * time.Millisecond

// measurement is one armed start of a Source.
type measurement struct {
	src  *Source
	home string
	dir  string

	mu        sync.Mutex
	released  bool
	sessionID string
	continued bool
	path      string // the rollout, once found
	offset    int64  // bytes of whole lines read
	floor     int64  // a turn opened before this offset is not the one asked for
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
	m.reset(sessionID, continued)
	if !continued {
		return
	}
	if m.find(true) {
		m.read(false)
		m.floor = m.offset
		m.src.log.Debug("codex rollout of a continued session: reading from its end",
			"session_id", sessionID, "path", m.path, "offset", m.offset)
		return
	}
	m.tr.countFrom = m.src.now()
	m.src.log.Debug("codex rollout of a continued session not found yet; earlier records will not count",
		"session_id", sessionID)
}

// reset starts following sessionID from nothing.
func (m *measurement) reset(sessionID string, continued bool) {
	m.sessionID, m.continued = sessionID, continued
	m.path, m.offset, m.floor = "", 0, 0
	m.lastFull = time.Time{}
	m.tr = tracker{
		mismatch: func(t *turn, diff figures) {
			m.src.log.Warn("codex rollout: a turn's per-call figures and its running-total difference disagree; the per-call figures are reported",
				"session_id", m.sessionID, "turn_id", t.id, "per_call", fmt.Sprintf("%+v", t.sum), "total_difference", fmt.Sprintf("%+v", diff))
		},
		incomplete: func(pos int64) {
			m.src.log.Debug("codex rollout: a token_count record lacks a counter and does not count",
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
	if m.released {
		return domain.Usage{}, "", false, fmt.Errorf("codex_measure: measurement released")
	}
	if sessionID != m.sessionID {
		m.reset(sessionID, false)
	}
	defer func() { m.floor = m.offset }()
	t0 := time.Now()
	for {
		if m.find(false) {
			m.read(true)
		}
		if t := m.tr.ended; t != nil {
			m.tr.ended = nil
			if t.startPos >= m.floor {
				if t.records == 0 {
					m.src.log.Debug("codex rollout: the turn ended without a complete token_count record",
						"session_id", sessionID, "turn_id", t.id)
					return domain.Usage{}, "", false, nil
				}
				m.src.log.Debug("codex rollout: turn figures read", "session_id", sessionID, "turn_id", t.id,
					"records", t.records, "waited_ms", time.Since(t0).Milliseconds())
				return t.sum.usage(), m.modelOf(t), true, nil
			}
			m.src.log.Debug("codex rollout: discarded the figures of an earlier turn whose wait had ended",
				"session_id", sessionID, "turn_id", t.id)
		}
		m.mu.Unlock()
		timer := time.NewTimer(m.src.poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			m.mu.Lock()
			if t := m.tr.open; t != nil && t.records > 0 && !t.reported && t.startPos >= m.floor {
				t.reported = true
				m.src.log.Debug("codex rollout: the turn's end was not read in time; reporting the records read",
					"session_id", sessionID, "turn_id", t.id, "records", t.records)
				return t.sum.usage(), m.modelOf(t), true, nil
			}
			return domain.Usage{}, "", false, ctx.Err()
		case <-timer.C:
		}
		m.mu.Lock()
		if m.released {
			return domain.Usage{}, "", false, fmt.Errorf("codex_measure: measurement released")
		}
	}
}

// modelOf is the model a turn's figures are attributed to: its own turn
// context's, else the latest one read.
func (m *measurement) modelOf(t *turn) string {
	if t.model != "" {
		return t.model
	}
	return m.tr.model
}

// find locates the session's rollout, first in the date folders of
// yesterday, today and tomorrow, then (at most every fullSearchEvery,
// unless now) in every date folder. It reports whether the path is known.
func (m *measurement) find(now bool) bool {
	if m.path != "" {
		return true
	}
	if !safeID(m.sessionID) {
		return false
	}
	sessions := filepath.Join(m.home, "sessions")
	name := "rollout-*-" + m.sessionID + ".jsonl"
	t := m.src.now()
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
	m.path = p
	m.src.log.Debug("codex rollout found", "session_id", m.sessionID, "path", p)
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

// safeID reports whether a session id can be part of a file name pattern.
func safeID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\*?[]`) && id != "." && id != ".."
}

// read processes the whole lines written since the last read; a trailing
// line without its newline is left for the next one.
func (m *measurement) read(counting bool) {
	f, err := os.Open(m.path)
	if err != nil {
		m.src.log.Debug("codex rollout could not be opened", "path", m.path, "error", err)
		return
	}
	defer f.Close()
	if _, err := f.Seek(m.offset, io.SeekStart); err != nil {
		return
	}
	data, err := io.ReadAll(f)
	if err != nil && len(data) == 0 {
		return
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(data[:i], []byte("\r"))
		if len(bytes.TrimSpace(line)) > 0 {
			m.tr.line(line, m.offset, counting)
		}
		m.offset += int64(i) + 1
		data = data[i+1:]
	}
}

// Release removes the temporary directory. It may be called more than
// once.
func (m *measurement) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return nil
	}
	m.released = true
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("codex_measure: removing the temporary directory: %w", err)
	}
	return nil
}
