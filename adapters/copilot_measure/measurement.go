package copilot_measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/journaltail"
)

// measurement is one armed start of a Source.
type measurement struct {
	src      *Source
	dir      string
	sessions string // <state dir>/session-state

	mu        sync.Mutex
	released  bool
	sessionID string
	tail      journaltail.Tail // the journal, once found
	open      *turn            // the turn being read
	ended     *turn            // the latest ended turn not yet reported
}

// turn is one turn's records as read.
type turn struct {
	sum     domain.Usage
	model   string
	records int
	final   bool // the turn's final reply was read
}

func (t *turn) figures() journaltail.Figures {
	return journaltail.Figures{Usage: t.sum, Model: t.model, Records: t.records}
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
			"session_id", sessionID, "path", m.tail.Path, "offset", m.tail.Offset)
	}
}

func (m *measurement) reset(sessionID string) {
	m.sessionID = sessionID
	m.tail.Reset()
	m.open, m.ended = nil, nil
}

// TurnUsage waits, bounded by ctx, for the end of the turn that just
// ended on sessionID and reports the sum of its usage records.
func (m *measurement) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return domain.Usage{}, "", false, fmt.Errorf("copilot_measure: %w", journaltail.ErrReleased)
	}
	if sessionID != m.sessionID {
		m.reset(sessionID)
	}
	u, model, ok, err := journaltail.Wait(ctx, &m.mu, m, journaltail.Waiting{
		Settle: m.src.settle, Poll: m.src.poll, Log: m.src.log, SessionID: m.sessionID,
	})
	if errors.Is(err, journaltail.ErrReleased) {
		err = fmt.Errorf("copilot_measure: %w", err)
	}
	return u, model, ok, err
}

// Poll reads what the journal gained (journaltail.Turns).
func (m *measurement) Poll() {
	if m.find() {
		m.read(true)
	}
}

// TakeEnded hands the ended turn over (journaltail.Turns).
func (m *measurement) TakeEnded() (journaltail.Figures, bool) {
	t := m.ended
	if t == nil {
		return journaltail.Figures{}, false
	}
	m.ended = nil
	return t.figures(), true
}

// TakeOpen hands the open turn over once it counted a record
// (journaltail.Turns).
func (m *measurement) TakeOpen() (journaltail.Figures, bool) {
	t := m.open
	if t == nil || t.records == 0 {
		return journaltail.Figures{}, false
	}
	m.open = nil
	return t.figures(), true
}

// Grew is when a read last found a new line (journaltail.Turns).
func (m *measurement) Grew() time.Time { return m.tail.Grew }

// Released reports whether Release ran (journaltail.Turns).
func (m *measurement) Released() bool { return m.released }

// find locates the session's journal.
func (m *measurement) find() bool {
	if m.tail.Path != "" {
		return true
	}
	if !journaltail.ValidID(m.sessionID) {
		return false
	}
	p := filepath.Join(m.sessions, m.sessionID, "events.jsonl")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	m.tail.Path = p
	m.src.log.Debug("copilot journal found", "session_id", m.sessionID, "path", m.tail.Path)
	return true
}

// read processes the whole lines written since the last read; counting
// false only skips them (a continued session's past).
func (m *measurement) read(counting bool) {
	if counting {
		m.tail.Read(m.line)
	} else {
		m.tail.Read(nil)
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
