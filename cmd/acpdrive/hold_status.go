package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/linewatch"
)

// holdStatusFile is the holder's record of its session, read by acpdrive
// held (docs/behaviour.md#held-sessions).
const holdStatusFile = "status"

// The turn states a holder records.
const (
	turnRunning = "running" // a session/prompt is unanswered
	turnIdle    = "idle"    // every prompt was answered
)

// answerLineBound is the longest runtime line inspected for a prompt's
// answer (an answer is a small object; longer lines are updates).
const answerLineBound = 64 << 10

// holdStatus is the holder's status file.
type holdStatus struct {
	// Runtime is the runtime's command line.
	Runtime []string `json:"runtime"`
	// Host is where the runtime runs; "" for this machine.
	Host string `json:"host,omitempty"`
	// Turn is "" before the first prompt, then turnRunning or turnIdle.
	Turn string `json:"turn,omitempty"`
	// Since is when Turn last changed (the holder's start before).
	Since time.Time `json:"since"`
	// LastStopReason is the stopReason the last answered prompt had, or
	// "error" for a prompt answered with an error.
	LastStopReason string `json:"last_stop_reason,omitempty"`
}

// statusRecorder notes, from the messages a holder relays, when a turn
// starts (a session/prompt request to the runtime) and ends (the
// runtime's answer to it), and writes the status file at each change:
// a few writes a turn, none per update.
type statusRecorder struct {
	dir string

	mu      sync.Mutex
	st      holdStatus
	pending map[string]struct{} // the unanswered prompts' ids (their JSON)
}

// newStatusRecorder writes the first status of a holder serving command.
func newStatusRecorder(dir string, command []string) *statusRecorder {
	r := &statusRecorder{dir: dir, st: holdStatus{Runtime: command, Since: time.Now().UTC()}, pending: map[string]struct{}{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.write()
	return r
}

// write replaces the status file (a rename: a reader sees the old or the
// new one whole). A failure leaves the previous one; held then shows it.
func (r *statusRecorder) write() {
	b, err := json.Marshal(r.st)
	if err != nil {
		return
	}
	tmp := filepath.Join(r.dir, holdStatusFile+".new")
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(r.dir, holdStatusFile))
	}
}

// started notes where the runtime runs.
func (r *statusRecorder) started(host string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.Host != host {
		r.st.Host = host
		r.write()
	}
}

// rpcHead is what the recorder reads of a JSON-RPC message.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		StopReason string `json:"stopReason"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// sent inspects a line sent to the runtime: a session/prompt request
// starts a turn.
func (r *statusRecorder) sent(line []byte) {
	if !bytes.Contains(line, []byte(`"session/prompt"`)) {
		return
	}
	var h rpcHead
	if json.Unmarshal(line, &h) != nil || h.Method != "session/prompt" || len(h.ID) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[string(bytes.TrimSpace(h.ID))] = struct{}{}
	if r.st.Turn != turnRunning {
		r.st.Turn, r.st.Since = turnRunning, time.Now().UTC()
		r.write()
	}
}

// watching reports whether a prompt is unanswered (the runtime's lines
// are inspected only then).
func (r *statusRecorder) watching() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0
}

// received inspects a line of the runtime's: the answer to an
// unanswered prompt ends its turn.
func (r *statusRecorder) received(line []byte) {
	if !bytes.Contains(line, []byte(`"stopReason"`)) && !bytes.Contains(line, []byte(`"error"`)) {
		return
	}
	var h rpcHead
	if json.Unmarshal(line, &h) != nil || h.Method != "" || len(h.ID) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := string(bytes.TrimSpace(h.ID))
	if _, ok := r.pending[id]; !ok {
		return
	}
	delete(r.pending, id)
	switch {
	case h.Result != nil && h.Result.StopReason != "":
		r.st.LastStopReason = h.Result.StopReason
	case len(h.Error) > 0 && !bytes.Equal(h.Error, []byte("null")):
		r.st.LastStopReason = "error"
	}
	if len(r.pending) == 0 {
		r.st.Turn, r.st.Since = turnIdle, time.Now().UTC()
	}
	r.write()
}

// hooks are the recorder's view of the runtime's lines.
func (r *statusRecorder) hooks() linewatch.Hooks {
	return linewatch.Hooks{Started: r.started, Sent: r.sent, Watching: r.watching, Received: r.received, MaxLine: answerLineBound}
}
