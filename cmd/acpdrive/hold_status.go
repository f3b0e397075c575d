package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/ports"
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
func (r *statusRecorder) started(id ports.Identity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.Host != id.Host {
		r.st.Host = id.Host
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

// recordingLauncher is a holder's launcher: the local one, with the
// runtime's streams watched by a statusRecorder.
type recordingLauncher struct {
	ports.Launcher
	rec *statusRecorder
}

// Prepare prepares the launch and watches what it starts.
func (l recordingLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p, err := l.Launcher.Prepare(req)
	if err != nil {
		return nil, err
	}
	return recordingPlan{Plan: p, rec: l.rec}, nil
}

// recordingPlan starts a watched runtime.
type recordingPlan struct {
	ports.Plan
	rec *statusRecorder
}

// Start starts the runtime and wraps its streams.
func (p recordingPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	p.rec.started(proc.Identity())
	return &recordingProcess{Process: proc,
		in:  promptWatcher{WriteCloser: proc.Stdin(), rec: p.rec},
		out: &answerWatcher{r: proc.Stdout(), rec: p.rec}}, nil
}

// recordingProcess is a runtime whose streams the recorder watches.
type recordingProcess struct {
	ports.Process
	in  promptWatcher
	out *answerWatcher
}

// Stdin is the runtime's standard input, watched for prompts.
func (p *recordingProcess) Stdin() io.WriteCloser { return p.in }

// Stdout is the runtime's standard output, watched for their answers.
func (p *recordingProcess) Stdout() io.Reader { return p.out }

// promptWatcher sees each line the holder writes to the runtime (one
// whole line a Write).
type promptWatcher struct {
	io.WriteCloser
	rec *statusRecorder
}

// Write inspects the line and writes it.
func (w promptWatcher) Write(b []byte) (int, error) {
	w.rec.sent(b)
	return w.WriteCloser.Write(b)
}

// answerWatcher splits what the runtime writes into lines while a prompt
// is unanswered, each line kept up to answerLineBound.
type answerWatcher struct {
	r    io.Reader
	rec  *statusRecorder
	line []byte
	skip bool // the current line passed the bound, or began unwatched
}

// Read reads and inspects what was read.
func (a *answerWatcher) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	a.inspect(b[:n])
	return n, err
}

// inspect splits chunk into lines; the reading goroutine is the only
// caller.
func (a *answerWatcher) inspect(chunk []byte) {
	if !a.rec.watching() {
		a.line = nil // nothing kept between turns
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			a.skip = i < len(chunk)-1 // a line begun unwatched is not read
		} else if len(chunk) > 0 {
			a.skip = true
		}
		return
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if !a.skip {
			if len(a.line)+len(part) > answerLineBound {
				a.skip, a.line = true, a.line[:0]
			} else {
				a.line = append(a.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !a.skip {
			a.rec.received(a.line)
		}
		a.line, a.skip = a.line[:0], false
		chunk = chunk[i+1:]
	}
}
