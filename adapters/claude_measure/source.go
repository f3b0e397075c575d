package claude_measure

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// SourceName is the source's Name.
	SourceName = "claude_transcript"
	// AdapterName is the agentInfo.name the Claude agent ACP adapter
	// reports in its initialize response, and the npm package it ships in,
	// up to 0.23.1.
	AdapterName = "@zed-industries/claude-agent-acp"
	// CurrentAdapterName is the name and package of the adapter's later
	// releases (0.101.0 and on).
	CurrentAdapterName = "@agentclientprotocol/claude-agent-acp"
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// ConfigDir is Claude Code's config home as the runtime sees it. Empty:
	// $CLAUDE_CONFIG_DIR, else $HOME/.claude, of this process's environment
	// when Arm runs (the runtime inherits it). Set it when the launch gives
	// the runtime another HOME or CLAUDE_CONFIG_DIR of its own.
	ConfigDir string
	// Settle is how long the transcript must stay unchanged to settle a
	// turn whose last record carries no final stop reason (a cancelled
	// turn); zero means 300 ms.
	Settle time.Duration
}

// Source measures Claude Code's token usage from its session transcript.
// It is safe for concurrent use; each Arm is one start. Its Name is
// "claude_transcript", its RuntimeName "@zed-industries/claude-agent-acp"
// (the adapter's agentInfo.name); it also recognizes the name of the later
// releases, "@agentclientprotocol/claude-agent-acp" (Recognizes). Claims
// reports whether a word of command names the Claude agent ACP adapter
// under either package (see the package documentation for the rule). Arm creates the start's private directory and resolves the
// config home; the measurement carries no environment.
type Source struct{ journaltail.Source }

var _ ports.MeasurementSource = (*Source)(nil)

// New returns the Claude Code transcript source.
func New(o Options) *Source {
	return &Source{journaltail.NewSource(journaltail.Spec{
		Adapter: "claude_measure", Name: SourceName, RuntimeName: AdapterName,
		RuntimeNames: []string{CurrentAdapterName, "claude-agent-acp"},
		// The adapter's executable is the package's bin entry.
		Package: AdapterName, Packages: []string{CurrentAdapterName},
		Bins: []string{"claude-agent-acp"}, DirPrefix: "acpdrive-claude-measure-",
		HomeEnv: "CLAUDE_CONFIG_DIR", HomeSub: []string{".claude"},
		// A turn's transcript must stay unchanged this long, once a record
		// counted, to settle a turn without a final stop reason; it is read
		// every Poll while a turn settles.
		Settle: 300 * time.Millisecond, Poll: 10 * time.Millisecond,
		Open: func(st journaltail.Start) (ports.Measurement, error) {
			return &measurement{
				log:      st.Log,
				private:  st.Private(),
				projects: filepath.Join(st.Home, "projects"),
				settle:   st.Settle,
				poll:     st.Poll,
				sessions: map[string]*sessionState{},
			}, nil
		},
	}, journaltail.Tuning{Logger: o.Logger, Home: o.ConfigDir, Settle: o.Settle})}
}

// measurement is one armed start.
type measurement struct {
	log      *slog.Logger
	projects string
	settle   time.Duration
	poll     time.Duration

	mu       sync.Mutex
	sessions map[string]*sessionState
	private  journaltail.Private
}

// sessionState is what the source remembers of one session between
// turns.
type sessionState struct {
	path       string          // the transcript, once found
	offset     int64           // where the next turn's records start
	lastPrompt string          // promptId of the last settled turn
	counted    map[string]bool // message keys already counted
}

// Env is empty: the transcript stays where Claude Code keeps it.
func (m *measurement) Env() []string { return nil }

// SessionOpened records the session; for a continued session it reads
// the transcript as it is now, so its earlier turns are not counted again.
func (m *measurement) SessionOpened(sessionID string, continued bool) {
	st := &sessionState{counted: map[string]bool{}}
	if continued && journaltail.ValidID(sessionID) {
		if path := m.find(sessionID); path != "" {
			st.path = path
			if data, err := readFrom(path, 0); err == nil {
				past := scan(data, "", nil)
				st.offset, st.lastPrompt = past.consumed, past.lastPrompt
				for _, k := range past.keys {
					st.counted[k] = true
				}
				m.log.Debug("continued session: transcript read up to here", "session_id", sessionID,
					"path", path, "offset", st.offset, "messages", len(past.keys))
			}
		}
	}
	m.mu.Lock()
	m.sessions[sessionID] = st
	m.mu.Unlock()
}

// state returns the session's state, making it for a session never
// opened (read from the transcript's beginning).
func (m *measurement) state(sessionID string) *sessionState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.sessions[sessionID]
	if st == nil {
		st = &sessionState{counted: map[string]bool{}}
		m.sessions[sessionID] = st
	}
	return st
}

// Release removes the start's private directory; the transcript is left
// as it is.
func (m *measurement) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.private.Remove()
}

// find returns the transcript of sessionID in any project folder, the
// most recently modified when several hold one; "" when none does.
func (m *measurement) find(sessionID string) string {
	entries, err := os.ReadDir(m.projects)
	if err != nil {
		return ""
	}
	var best string
	var bestMod time.Time
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(m.projects, e.Name(), sessionID+".jsonl")
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if best == "" || fi.ModTime().After(bestMod) {
			best, bestMod = p, fi.ModTime()
		}
	}
	return best
}
