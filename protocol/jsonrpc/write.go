package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// Outgoing writes.
//
// One goroutine owned by the Conn (writeLoop) makes every w.Write call. A
// writer hands it one complete line at a time through the unbuffered channel
// wq and then waits for the outcome or for its context, whichever comes
// first. The writer goroutine therefore may stay blocked in w.Write after
// the caller has returned; the stream is then broken (the peer may hold part
// of a line), and the goroutine returns once that Write does, which the owner
// brings about by closing the writer.

// States of a writeReq, moved on by compare-and-swap so that exactly one of
// the writer goroutine (which starts the write) and the requester (which
// gives up on it) wins.
const (
	reqQueued    int32 = iota // handed over or about to be; not written yet
	reqWriting                // the writer goroutine has started w.Write
	reqAbandoned              // the requester gave up before the write started
)

// writeReq is one line for the writer goroutine.
type writeReq struct {
	ctx      context.Context
	line     []byte
	deadline time.Time // ctx's deadline, zero when none
	state    atomic.Int32
	done     chan error // buffered: the writer never blocks on it
}

// writeDeadliner is a writer whose writes can be bounded in time, such as
// an *os.File pipe.
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// write sends one complete line and returns by ctx's end at the latest.
//
//   - ctx already ended: ctx.Err(), nothing is sent.
//   - Close was called, the read side ended, or the stream is broken, before
//     the line was handed to the writer goroutine: the matching error at
//     once (ErrClosed or the sticky ErrWriteFailed).
//   - ctx ends before the writer goroutine started writing the line:
//     ctx.Err(); nothing of the line was written and the stream stays usable.
//   - ctx is cancelled while the line is being written and ctx carries a
//     deadline: the write's own outcome stands once it comes, by that
//     deadline (the writer goroutine sets it on a pipe) and a short grace
//     at the latest; a line written whole returns nil and the stream stays
//     usable, although ctx ended. This is the one wait past ctx's end.
//   - otherwise, ctx ends while the line is being written: the stream is
//     broken (the peer may hold part of the line), and the sticky error
//     (wrapping ErrWriteFailed and ctx.Err()) is returned.
func (c *Conn) write(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.writeGate(); err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	req := &writeReq{ctx: ctx, line: line, deadline: deadline, done: make(chan error, 1)}
	select {
	case c.wq <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.broken:
		return c.WriteErr()
	case <-c.stop:
		return errClosedByClose
	case <-c.wdone:
		return c.stoppedErr()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
	}
	if req.state.CompareAndSwap(reqQueued, reqAbandoned) {
		return ctx.Err() // the writer goroutine will skip it
	}
	// The writer goroutine is writing the line. A cancel that lands while
	// a line that completes is written must not break a whole stream, so
	// a write bounded by a deadline is waited for (docs/behaviour.md#bounds).
	if !req.deadline.IsZero() {
		t := time.NewTimer(time.Until(req.deadline) + writeOutcomeGrace)
		defer t.Stop()
		select {
		case err := <-req.done: // its outcome stands
			return err
		case <-t.C:
		case <-c.stop:
		}
	}
	select {
	case err := <-req.done: // finished meanwhile: its outcome stands
		return err
	default:
	}
	return c.fail(ctx.Err())
}

// writeOutcomeGrace is how long past a line's deadline a requester whose
// context ended waits for the outcome of a write in progress: the writer
// goroutine reports a write its deadline cut within it.
const writeOutcomeGrace = 50 * time.Millisecond

// writeGate returns why no new write may start, or nil.
func (c *Conn) writeGate() error {
	if c.closed.Load() {
		return errClosedByClose
	}
	if err := c.WriteErr(); err != nil {
		return err
	}
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closedErrLocked()
	default:
		return nil
	}
}

// stoppedErr is the error for a write that found the writer goroutine gone.
func (c *Conn) stoppedErr() error {
	if err := c.writeGate(); err != nil {
		return err
	}
	return errClosedByClose
}

// fail records cause as the stream's write failure, unless one was recorded
// before, and returns the recorded failure.
func (c *Conn) fail(cause error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr == nil {
		c.werr = fmt.Errorf("%w: %w", ErrWriteFailed, cause)
		close(c.broken)
		c.log.Debug("write to peer failed; the stream is broken", "error", cause)
	}
	return c.werr
}

// Broken returns a channel closed at the first write failure: a write error,
// a short write, or a write whose context ended while it was in progress.
// From then on every write fails at once with WriteErr.
func (c *Conn) Broken() <-chan struct{} { return c.broken }

// WriteErr returns the first write failure, wrapping ErrWriteFailed and its
// cause, or nil while writes still work.
func (c *Conn) WriteErr() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.werr
}

// writeLoop is the connection's writer goroutine. It returns after Close,
// after the read side ended, or after the stream broke, but never while a
// w.Write is in progress.
func (c *Conn) writeLoop() {
	defer close(c.wdone)
	wd, _ := c.w.(writeDeadliner)
	deadlineSet := false // a deadline is in force on wd
	for {
		var req *writeReq
		select {
		case req = <-c.wq:
		case <-c.stop:
			return
		case <-c.done:
			return
		case <-c.broken:
			return
		}
		if req.ctx.Err() != nil || !req.state.CompareAndSwap(reqQueued, reqWriting) {
			continue // the requester returns ctx.Err(); nothing was written
		}
		if err := c.writeGate(); err != nil {
			req.done <- err
			continue
		}
		if wd != nil && (deadlineSet || !req.deadline.IsZero()) {
			deadlineSet = wd.SetWriteDeadline(req.deadline) == nil && !req.deadline.IsZero()
		}
		req.done <- c.writeLine(req)
	}
}

// writeLine performs one w.Write of a whole line.
func (c *Conn) writeLine(req *writeReq) error {
	n, err := c.w.Write(req.line)
	if err == nil && n < len(req.line) {
		err = io.ErrShortWrite
	}
	if err == nil {
		return nil
	}
	if !req.deadline.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
		// The writer enforced ctx's deadline itself: say so in ctx's terms.
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return c.fail(err)
}
