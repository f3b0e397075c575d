package journaltail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// Journal is what a Follower asks of one runtime's journal format and
// turn rules. The Follower calls every method with its lock held.
type Journal interface {
	// Locate returns the path of sessionID's journal once it exists.
	Locate(sessionID string) (string, bool)
	// Fold applies one whole, trimmed line to the turn state.
	Fold(line []byte)
	// ResetTurns forgets the turn state (a new session followed).
	ResetTurns()
	// TakeEnded removes and returns the ended turn not yet reported.
	TakeEnded() (Figures, bool)
	// TakeOpen removes and returns the turn being read if it has at
	// least one counted record.
	TakeOpen() (Figures, bool)
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

// Follower is the generic half of a journal-reading ports.Measurement:
// it follows one session's journal with a Tail, hands its lines to a
// Journal, and implements SessionOpened, TurnUsage and Release over it.
// It is safe for concurrent use through mu, the lock the Journal's state
// is guarded by.
type Follower struct {
	mu  sync.Locker
	j   Journal
	opt FollowerOptions

	released  bool
	sessionID string
	tail      Tail
}

// NewFollower returns a Follower over j, guarded by mu.
func NewFollower(mu sync.Locker, j Journal, o FollowerOptions) *Follower {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Follower{mu: mu, j: j, opt: o, tail: Tail{Grew: time.Now()}}
}

// Env is empty: the journal stays where the runtime keeps it.
func (f *Follower) Env() []string { return nil }

// SessionOpened follows sessionID; a continued session's journal is read
// from its current end, so its earlier turns are not counted again.
func (f *Follower) SessionOpened(sessionID string, continued bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reset(sessionID)
	if continued && f.Find() {
		f.Read(false)
		f.opt.Log.Debug("journal of a continued session: reading from its end",
			"session_id", sessionID, "path", f.tail.Path, "offset", f.tail.Offset)
	}
}

func (f *Follower) reset(sessionID string) {
	f.sessionID = sessionID
	f.tail.Reset()
	f.j.ResetTurns()
}

// TurnUsage waits, bounded by ctx, for the end of the turn that just
// ended on sessionID and reports its figures (see Wait).
func (f *Follower) TurnUsage(ctx context.Context, sessionID string) (domain.Usage, string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.released {
		return domain.Usage{}, "", false, fmt.Errorf("%s: %w", f.opt.Name, ErrReleased)
	}
	if sessionID != f.sessionID {
		f.reset(sessionID)
	}
	u, model, ok, err := Wait(ctx, f.mu, (*follow)(f), Waiting{
		Settle: f.opt.Settle, Poll: f.opt.Poll, Log: f.opt.Log, SessionID: f.sessionID,
	})
	if errors.Is(err, ErrReleased) {
		err = fmt.Errorf("%s: %w", f.opt.Name, err)
	}
	return u, model, ok, err
}

// Find locates the session's journal; it reports whether it is known.
// The caller holds the lock.
func (f *Follower) Find() bool {
	if f.tail.Path != "" {
		return true
	}
	p, ok := f.j.Locate(f.sessionID)
	if !ok {
		return false
	}
	f.tail.Path = p
	f.opt.Log.Debug("journal found", "session_id", f.sessionID, "path", p)
	return true
}

// Read processes the whole lines written since the last read; counting
// false only skips them (a continued session's past). The caller holds
// the lock.
func (f *Follower) Read(counting bool) {
	if counting {
		f.tail.Read(f.j.Fold)
	} else {
		f.tail.Read(nil)
	}
}

// SessionID is the session followed. The caller holds the lock.
func (f *Follower) SessionID() string { return f.sessionID }

// Release removes the start's private directory; the journal is left as
// it is. It may be called more than once.
func (f *Follower) Release() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.released {
		return nil
	}
	f.released = true
	if err := os.RemoveAll(f.opt.Dir); err != nil {
		return fmt.Errorf("%s: removing the temporary directory: %w", f.opt.Name, err)
	}
	return nil
}

// follow is a Follower as Wait's Turns.
type follow Follower

func (w *follow) Poll() {
	f := (*Follower)(w)
	if f.Find() {
		f.Read(true)
	}
}

func (w *follow) TakeEnded() (Figures, bool) { return w.j.TakeEnded() }
func (w *follow) TakeOpen() (Figures, bool)  { return w.j.TakeOpen() }
func (w *follow) Grew() time.Time            { return w.tail.Grew }
func (w *follow) Released() bool             { return w.released }

// Take removes the turn *p points at and returns its figures, if there
// is one and, when needRecord, it counted at least one record: the
// TakeEnded and TakeOpen of a Journal.
func Take[T any](p **T, figures func(*T) Figures, needRecord bool) (Figures, bool) {
	t := *p
	if t == nil {
		return Figures{}, false
	}
	f := figures(t)
	if needRecord && f.Records == 0 {
		return Figures{}, false
	}
	*p = nil
	return f, true
}
