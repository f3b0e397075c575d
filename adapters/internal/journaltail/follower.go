package journaltail

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Journal is what a Follower asks of one runtime's journal: where a
// session's journal is, and what a line of its format means to a turn.
type Journal interface {
	// Locate returns the path of sessionID's journal once it exists;
	// sessionID is one ValidID accepts.
	Locate(sessionID string) (string, bool)
	// Classify reads one whole, trimmed, non-empty line.
	Classify(line []byte) Line
}

// FollowerOptions configure a Follower.
type FollowerOptions struct {
	// Name prefixes the Follower's errors ("qwen_measure").
	Name string
	// Log receives the Follower's Debug records; nil discards them.
	Log *slog.Logger
	// Settle and Poll are Wait's (see Waiting).
	Settle, Poll time.Duration
	// Dir is the start's private directory, removed by Release.
	Dir string
}

// Follower is the ports.Measurement of a runtime whose journal is JSON
// lines it keeps whatever the environment says: it follows one session's
// journal with a Tail, folds its lines into a Book through a Journal, and
// answers TurnUsage with Wait. It is safe for concurrent use.
type Follower struct {
	j   Journal
	opt FollowerOptions

	mu        sync.Mutex
	private   Private
	sessionID string
	tail      Tail
	book      Book
}

var _ ports.Measurement = (*Follower)(nil)

// NewFollower returns a Follower over j.
func NewFollower(j Journal, o FollowerOptions) *Follower {
	o.Log = logs.OrDiscard(o.Log)
	return &Follower{j: j, opt: o, private: NewPrivate(o.Name, o.Dir), tail: Tail{Grew: time.Now()}}
}

// Env is empty: the journal stays where the runtime keeps it.
func (f *Follower) Env() []string { return nil }

// SessionOpened follows sessionID; a continued session's journal is read
// from its current end, so its earlier turns are not counted again.
func (f *Follower) SessionOpened(sessionID string, continued bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reset(sessionID)
	if continued && f.find() {
		f.tail.Read(nil)
		f.opt.Log.Debug("journal of a continued session: reading from its end",
			"session_id", sessionID, "path", f.tail.Path, "offset", f.tail.Offset)
	}
}

func (f *Follower) reset(sessionID string) {
	f.sessionID = sessionID
	f.tail.Reset()
	f.book.Reset()
}

// TurnUsage waits, bounded by ctx, for the end of the turn that just
// ended on sessionID and reports its figures (see Wait).
func (f *Follower) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sessionID != f.sessionID {
		f.reset(sessionID)
	}
	return f.private.Wait(ctx, &f.mu, (*follow)(f), Waiting{
		Settle: f.opt.Settle, Poll: f.opt.Poll, Log: f.opt.Log, SessionID: f.sessionID,
	})
}

// find locates the session's journal; it reports whether it is known.
func (f *Follower) find() bool {
	if f.tail.Path != "" {
		return true
	}
	if !ValidID(f.sessionID) {
		return false
	}
	p, ok := f.j.Locate(f.sessionID)
	if !ok {
		return false
	}
	f.tail.Path = p
	f.opt.Log.Debug("journal found", "session_id", f.sessionID, "path", p)
	return true
}

// fold applies one line of the journal to the turns.
func (f *Follower) fold(_ int64, line []byte) {
	if len(line) == 0 {
		return
	}
	l := f.j.Classify(line)
	if l.Kind == LineIncompleteCall {
		f.opt.Log.Debug("journal: a model call's record lacks a counter and does not count", "session_id", f.sessionID)
	}
	f.book.Fold(l)
}

// Release removes the start's private directory; the journal is left as
// it is. It may be called more than once.
func (f *Follower) Release() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.private.Remove()
}

// follow is a Follower as Wait's Turns.
type follow Follower

func (w *follow) Poll() {
	f := (*Follower)(w)
	if f.find() {
		f.tail.Read(f.fold)
	}
}

func (w *follow) TakeEnded() (Figures, bool) { return w.book.TakeEnded() }
func (w *follow) TakeOpen() (Figures, bool)  { return w.book.TakeOpen() }
func (w *follow) Grew() time.Time            { return w.tail.Grew }
func (w *follow) Released() bool             { return w.private.Released() }
