package netserve

import (
	"context"
	"strconv"
	"sync"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// journal is a connection's outgoing messages, numbered from 0, each
// carrying its cursor (_meta["acp/cursor"], docs/behaviour.md#network),
// the latest retention of them held for a link that resumes after a
// cursor (up to twice as many are). The runtime's output waits while the
// links are retention messages behind. With a journal on disk
// (Options.JournalDir), every message is also kept there, and a link
// that resumes after a cursor older than those in memory is sent the
// ones on disk first (docs/behaviour.md#held-sessions).
type journal struct {
	retention int64
	disk      *diskJournal // nil when none

	mu        sync.Mutex
	cond      *sync.Cond
	events    [][]byte // the held messages, the one of sequence first first
	first     int64
	next      int64 // the sequence of the next message
	delivered int64 // every message before it was written to a link
	ended     bool  // the runtime's output ended
	closed    bool
	slab      []byte // where the next messages are put, many to an allocation
}

// slabBytes is the size of an allocation messages are put in.
const slabBytes = 64 << 10

// newJournal is a connection's journal as o sets it (Listen's defaults
// applied).
func newJournal(o Options) *journal {
	j := &journal{retention: int64(o.Retention)}
	if o.JournalDir != "" {
		j.disk = newDiskJournal(o.JournalDir, o.JournalBytes, o.Logger)
	}
	j.cond = sync.NewCond(&j.mu)
	return j
}

// add numbers msg, puts its cursor in it and holds it, waiting while
// the links are retention messages behind; errLinkClosed once closed.
// The links see it at the next publish (or when add waits), so that
// what the runtime wrote in one go is sent in one go.
func (j *journal) add(msg []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.next-j.delivered >= j.retention && !j.closed {
		j.cond.Broadcast()
		j.cond.Wait()
	}
	if j.closed {
		return errLinkClosed
	}
	need := len(msg) + 64 // the cursor's bytes, with room to spare
	if cap(j.slab)-len(j.slab) < need {
		j.slab = make([]byte, 0, max(slabBytes, need))
	}
	start := len(j.slab)
	j.slab = netwire.AddCursor(j.slab, msg, j.next)
	j.events = append(j.events, j.slab[start:len(j.slab):len(j.slab)])
	if j.disk != nil {
		j.disk.append(j.next, j.events[len(j.events)-1])
	}
	j.next++
	if int64(len(j.events)) >= 2*j.retention { // trimmed in halves: amortized, never per message
		drop := int64(len(j.events)) - j.retention
		j.events = append(j.events[:0:0], j.events[drop:]...)
		j.first += drop
	}
	return nil
}

// publish wakes the links for what was added.
func (j *journal) publish() {
	j.mu.Lock()
	j.cond.Broadcast()
	j.mu.Unlock()
}

// after returns the sequence following cursor ("" is the first message
// no link was sent); false when the messages after it are no longer
// held (or the cursor was never given).
func (j *journal) after(cursor string) (int64, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if cursor == "" {
		return j.delivered, true
	}
	n, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || n+1 < j.oldest() || n+1 > j.next {
		return 0, false
	}
	return n + 1, true
}

// oldest is the sequence of the oldest message held, in memory or on
// disk.
func (j *journal) oldest() int64 {
	if j.disk != nil {
		if d, ok := j.disk.oldest(); ok && d < j.first {
			return d
		}
	}
	return j.first
}

// end records that the runtime's output ended.
func (j *journal) end() {
	j.mu.Lock()
	j.ended = true
	j.cond.Broadcast()
	j.mu.Unlock()
}

// close ends every wait and removes the journal on disk.
func (j *journal) close() {
	j.mu.Lock()
	j.closed = true
	if j.disk != nil {
		j.disk.close()
	}
	j.cond.Broadcast()
	j.mu.Unlock()
}

// follow sends the messages from sequence from through send (then flush
// once none is waiting) until ctx ends, send fails, or every message was
// sent after the runtime's output ended or the journal closed. It
// reports whether it ended because everything was sent.
func (j *journal) follow(ctx context.Context, from int64, send func(seq int64, msg []byte) error, flush func() error) bool {
	stop := context.AfterFunc(ctx, func() { j.mu.Lock(); j.cond.Broadcast(); j.mu.Unlock() })
	defer stop()
	for {
		j.mu.Lock()
		for from >= j.next && !j.ended && !j.closed && ctx.Err() == nil {
			j.cond.Wait()
		}
		if from < j.oldest() || ctx.Err() != nil {
			j.mu.Unlock()
			return false
		}
		if from >= j.next {
			j.mu.Unlock()
			return true
		}
		var batch [][]byte
		start := from
		if from < j.first { // on disk only
			var err error
			if batch, err = j.disk.read(from, j.first); err != nil {
				j.mu.Unlock()
				return false
			}
		} else {
			batch = j.events[from-j.first : j.next-j.first]
		}
		from += int64(len(batch))
		j.mu.Unlock()
		for i, msg := range batch {
			if send(start+int64(i), msg) != nil {
				return false
			}
		}
		if flush() != nil {
			return false
		}
		j.mu.Lock()
		if from > j.delivered {
			j.delivered = from
			j.cond.Broadcast()
		}
		j.mu.Unlock()
	}
}
