package qwen_measure

import (
	"path/filepath"
	"sync"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// measurement is one armed start of a Source: a journaltail.Follower
// over the session's chats journal, with the turn rules of Qwen Code.
type measurement struct {
	*journaltail.Follower
	src      *Source
	dir      string
	projects string

	mu    sync.Mutex
	open  *turn // the turn being read
	ended *turn // the latest ended turn not yet reported
}

func newMeasurement(s *Source, dir, projects string) *measurement {
	m := &measurement{src: s, dir: dir, projects: projects}
	m.Follower = journaltail.NewFollower(&m.mu, m, journaltail.FollowerOptions{
		Name: "qwen_measure", Log: s.log, Settle: s.settle, Poll: s.poll, Dir: dir,
	})
	return m
}

// turn is one turn's records as read.
type turn struct {
	sum     domain.Usage
	model   string
	records int
}

func (t *turn) figures() journaltail.Figures {
	return journaltail.Figures{Usage: t.sum, Model: t.model, Records: t.records}
}

// Locate finds the session's journal under any project folder
// (journaltail.Journal).
func (m *measurement) Locate(sessionID string) (string, bool) {
	if !journaltail.ValidID(sessionID) {
		return "", false
	}
	matches, err := filepath.Glob(filepath.Join(m.projects, "*", "chats", sessionID+".jsonl"))
	if err != nil || len(matches) == 0 {
		return "", false
	}
	return matches[len(matches)-1], true
}

// ResetTurns forgets the turns read (journaltail.Journal).
func (m *measurement) ResetTurns() { m.open, m.ended = nil, nil }

// TakeEnded hands the ended turn over (journaltail.Journal).
func (m *measurement) TakeEnded() (journaltail.Figures, bool) {
	return journaltail.Take(&m.ended, (*turn).figures, false)
}

// TakeOpen hands the open turn over once it counted a record
// (journaltail.Journal).
func (m *measurement) TakeOpen() (journaltail.Figures, bool) {
	return journaltail.Take(&m.open, (*turn).figures, true)
}

// Fold applies one journal line to the turn being read
// (journaltail.Journal).
func (m *measurement) Fold(line []byte) {
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
		m.src.log.Debug("qwen journal: an api_response record lacks a counter and does not count", "session_id", m.SessionID())
	case kindTurnEnd:
		if m.open != nil {
			m.ended, m.open = m.open, nil
		}
	}
}
