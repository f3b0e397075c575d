package gemini_measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// journalEntry is one line of a Gemini CLI session journal: the header
// (sessionId), a message (id, type, …) or a $set of the message list.
type journalEntry struct {
	SessionID string          `json:"sessionId"`
	Set       *journalSet     `json:"$set"`
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Tokens    json.RawMessage `json:"tokens"`
	Model     string          `json:"model"`
}

type journalSet struct {
	Messages *[]journalEntry `json:"messages"`
}

// journalPath finds the newest journal of sessionID under home.
func journalPath(home, sessionID string) string {
	if home == "" || len(sessionID) < 8 || strings.ContainsAny(sessionID, `/\*?[`) {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*-"+sessionID[:8]+".jsonl"))
	best, bestTime := "", int64(0)
	for _, p := range matches {
		fi, err := os.Stat(p)
		if err != nil || !journalOf(p, sessionID) {
			continue
		}
		if t := fi.ModTime().UnixNano(); best == "" || t > bestTime {
			best, bestTime = p, t
		}
	}
	return best
}

// journalOf reports whether the journal's first entry names sessionID.
func journalOf(path, sessionID string) bool {
	r := objectReader{path: path}
	found := false
	_ = r.read(func(_ int64, raw json.RawMessage) {
		if found {
			return
		}
		var e journalEntry
		if json.Unmarshal(raw, &e) == nil && e.SessionID != "" {
			found = e.SessionID == sessionID
		}
	})
	return found
}

// readJournal sums the "gemini" messages after the journal's last prompt.
func readJournal(home, sessionID string) (domain.Usage, string, bool) {
	path := journalPath(home, sessionID)
	if path == "" {
		return domain.Usage{}, "", false
	}
	var msgs []journalEntry
	index := map[string]int{}
	put := func(e journalEntry) {
		if i, ok := index[e.ID]; ok && e.ID != "" {
			msgs[i] = e
			return
		}
		index[e.ID] = len(msgs)
		msgs = append(msgs, e)
	}
	r := objectReader{path: path}
	_ = r.read(func(_ int64, raw json.RawMessage) {
		var e journalEntry
		if json.Unmarshal(raw, &e) != nil {
			return
		}
		switch {
		case e.Set != nil && e.Set.Messages != nil:
			msgs, index = nil, map[string]int{}
			for _, m := range *e.Set.Messages {
				put(m)
			}
		case e.ID != "" && e.Type != "":
			put(e)
		}
	})
	last := -1
	for i, e := range msgs {
		if e.Type == "user" && isPrompt(e.Content) {
			last = i
		}
	}
	var (
		sum   domain.Usage
		model string
		n     int
	)
	tokens := counters("input", "output", "cached", "thoughts", "tool", "total", "")
	for _, e := range msgs[last+1:] {
		u, _, complete := tokens.Usage(e.Tokens)
		if e.Type != "gemini" || !complete {
			continue
		}
		sum = sum.Add(u)
		model = e.Model
		n++
	}
	return sum, model, n > 0
}

// isPrompt reports whether a user message's content is a prompt, not only
// the function responses Gemini also records as "user".
func isPrompt(content json.RawMessage) bool {
	var parts []map[string]json.RawMessage
	if json.Unmarshal(content, &parts) != nil || len(parts) == 0 {
		return true // a string or another shape: a prompt
	}
	for _, p := range parts {
		if _, ok := p["functionResponse"]; !ok {
			return true
		}
	}
	return false
}
