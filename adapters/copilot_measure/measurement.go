package copilot_measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// measurement is one armed start of a Source.
type measurement struct {
	src      *Source
	dir      string
	sessions string // <state dir>/session-state

	mu        sync.Mutex
	released  bool
	sessionID string
	path      string    // the journal, once found
	offset    int64     // bytes of whole lines read
	grew      time.Time // when a read last found new lines
	open      *turn     // the turn being read
	ended     *turn     // the latest ended turn not yet reported
}

// turn is one turn's records as read.
type turn struct {
	sum     domain.Usage
	model   string
	records int
	final   bool // the turn's final reply was read
}

// Env is empty: the journal stays where Copilot CLI keeps it.
func (m *measurement) Env() []string { return nil }

// SessionOpened follows sessionID; a continued session's journal is read
// from its current end, so its earlier turns are not counted again.
func (m *measurement) SessionOpened(sessionID string, continued bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reset(sessionID)
	if continued && m.find() {
		m.read(false)
		m.src.log.Debug("copilot journal of a continued session: reading from its end",
			"session_id", sessionID, "path", m.path, "offset", m.offset)
	}
}

func (m *measurement) reset(sessionID string) {
	m.sessionID, m.path, m.offset = sessionID, "", 0
	m.open, m.ended = nil, nil
	m.grew = time.Now()
}

// TurnUsage waits, bounded by ctx, for the end of the turn that just
// ended on sessionID and reports the sum of its usage records.
func (m *measurement) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return domain.Usage{}, "", false, fmt.Errorf("copilot_measure: measurement released")
	}
	if sessionID != m.sessionID {
		m.reset(sessionID)
	}
	t0 := time.Now()
	for {
		if m.find() {
			m.read(true)
		}
		if t := m.ended; t != nil {
			m.ended = nil
			return m.report(t, "end read", t0)
		}
		if t := m.open; t != nil && t.records > 0 && time.Since(m.grew) >= m.src.settle {
			m.open = nil
			return m.report(t, "settled", t0)
		}
		m.mu.Unlock()
		timer := time.NewTimer(m.src.poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			m.mu.Lock()
			if t := m.open; t != nil && t.records > 0 {
				m.open = nil
				return m.report(t, "wait ended", t0)
			}
			return domain.Usage{}, "", false, ctx.Err()
		case <-timer.C:
		}
		m.mu.Lock()
		if m.released {
			return domain.Usage{}, "", false, fmt.Errorf("copilot_measure: measurement released")
		}
	}
}

// report hands a turn's figures over; a turn with no complete record
// reports ok false.
func (m *measurement) report(t *turn, how string, t0 time.Time) (domain.Usage, string, bool, error) {
	m.src.log.Debug("copilot journal: turn figures read", "session_id", m.sessionID, "how", how,
		"records", t.records, "waited_ms", time.Since(t0).Milliseconds())
	if t.records == 0 {
		return domain.Usage{}, "", false, nil
	}
	return t.sum, t.model, true, nil
}

// find locates the session's journal.
func (m *measurement) find() bool {
	if m.path != "" {
		return true
	}
	if !validID(m.sessionID) {
		return false
	}
	p := filepath.Join(m.sessions, m.sessionID, "events.jsonl")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	m.path = p
	m.src.log.Debug("copilot journal found", "session_id", m.sessionID, "path", m.path)
	return true
}

// validID reports whether a session id can name a journal file.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\*?[]`+"\x00")
}

// read processes the whole lines written since the last read; counting
// false only skips them (a continued session's past).
func (m *measurement) read(counting bool) {
	f, err := os.Open(m.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(m.offset, io.SeekStart); err != nil {
		return
	}
	data, _ := io.ReadAll(f)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		m.grew = time.Now()
		if counting {
			m.line(bytes.TrimSpace(data[:i]))
		}
		m.offset += int64(i) + 1
		data = data[i+1:]
	}
}

// line applies one journal line to the turn being read.
func (m *measurement) line(line []byte) {
	if len(line) == 0 {
		return
	}
	k, u, model := classify(line)
	switch k {
	case kindTurnStart:
		// A new prompt: an ended turn nobody asked for is dropped.
		m.open, m.ended = &turn{}, nil
	case kindCall:
		if m.open != nil {
			m.open.sum = m.open.sum.Add(u)
			m.open.records++
			if model != "" {
				m.open.model = model
			}
		}
	case kindIncompleteCall:
		m.src.log.Debug("copilot journal: a usage record lacks a counter and does not count", "session_id", m.sessionID)
	case kindFinalReply:
		if m.open != nil {
			m.open.final = true
		}
	case kindRoundEnd:
		if m.open != nil && m.open.final {
			m.ended, m.open = m.open, nil
		}
	}
}

// Release removes the start's private directory; the journal is left as
// it is. It may be called more than once.
func (m *measurement) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return nil
	}
	m.released = true
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("copilot_measure: removing the temporary directory: %w", err)
	}
	return nil
}
