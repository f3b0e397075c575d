package jsonrpc

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// stuckWriter is a writer whose reader never reads, the owner's way to
// close it, and what a Write blocked on it returns once it is closed.
type stuckWriter struct {
	w      io.Writer
	close  func()
	closed error
}

// stuckWriters returns the kinds of peer that stopped reading its input.
func stuckWriters(t *testing.T) map[string]func(t *testing.T) stuckWriter {
	return map[string]func(t *testing.T) stuckWriter{
		"io.Pipe nobody reads": func(t *testing.T) stuckWriter {
			pr, pw := io.Pipe()
			return stuckWriter{w: pw, close: func() {
				_ = pw.Close()
				_ = pr.Close()
			}, closed: io.ErrClosedPipe}
		},
		"full os.Pipe": func(t *testing.T) stuckWriter {
			r, w := fullPipe(t)
			return stuckWriter{w: w, close: func() {
				_ = w.Close()
				_ = r.Close()
			}, closed: os.ErrClosed}
		},
		"full os.Pipe without write deadlines": func(t *testing.T) stuckWriter {
			r, w := fullPipe(t)
			return stuckWriter{w: struct{ io.Writer }{w}, close: func() {
				_ = w.Close()
				_ = r.Close()
			}, closed: os.ErrClosed}
		},
	}
}

// fullPipe returns an os.Pipe whose buffer is full: the next write blocks.
func fullPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		_, err := w.Write(chunk)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	return r, w
}

// writeOps are the ways to write, each with a context.
var writeOps = map[string]func(ctx context.Context, c *Conn) error{
	"Notify": func(ctx context.Context, c *Conn) error {
		return c.Notify(ctx, "session/cancel", map[string]string{"sessionId": "s"})
	},
	"Reply": func(ctx context.Context, c *Conn) error {
		return c.Reply(ctx, IntID(7), map[string]string{"outcome": "selected"})
	},
	"ReplyError": func(ctx context.Context, c *Conn) error {
		return c.ReplyError(ctx, IntID(7), &Error{Code: CodeMethodNotFound, Message: "no"})
	},
	"Call": func(ctx context.Context, c *Conn) error {
		_, err := c.Call(ctx, "session/prompt", map[string]string{"sessionId": "s"})
		return err
	},
}

// enteringWriter reports on entered when the writer goroutine enters its
// first Write, then writes to w (which may block). entered is buffered.
type enteringWriter struct {
	w       io.Writer
	entered chan struct{}
	once    sync.Once
}

func (e *enteringWriter) Write(b []byte) (int, error) {
	e.once.Do(func() { e.entered <- struct{}{} })
	return e.w.Write(b)
}

// enteringDeadliner is an enteringWriter over a writer with write
// deadlines, which it keeps.
type enteringDeadliner struct {
	*enteringWriter
	d writeDeadliner
}

func (e enteringDeadliner) SetWriteDeadline(t time.Time) error { return e.d.SetWriteDeadline(t) }

// entering wraps w so that its first Write is reported, keeping its write
// deadlines when it has them.
func entering(w io.Writer) (io.Writer, <-chan struct{}) {
	e := &enteringWriter{w: w, entered: make(chan struct{}, 1)}
	if d, ok := w.(writeDeadliner); ok {
		return enteringDeadliner{e, d}, e.entered
	}
	return e, e.entered
}

// waitingCtx is a context that reports on waiting each time its Done method
// is called. A write calls Done only when it starts to wait for its turn at
// the writer goroutine (after it checked that the connection is open), so a
// report means the write has passed those checks and is queued. waiting is
// buffered; a report nobody took yet is not repeated.
type waitingCtx struct {
	context.Context
	waiting chan struct{}
}

func newWaitingCtx(parent context.Context) waitingCtx {
	return waitingCtx{Context: parent, waiting: make(chan struct{}, 1)}
}

func (w waitingCtx) Done() <-chan struct{} {
	select {
	case w.waiting <- struct{}{}:
	default:
	}
	return w.Context.Done()
}

// await waits for the report of a queued write, failing the test after
// hangCeiling.
func (w waitingCtx) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w.waiting:
	case <-time.After(hangCeiling):
		t.Fatalf("%s not queued within %v", what, hangCeiling)
	}
}

// waitReturns fails the test unless fn returns within d.
func waitReturns(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestWriteToPeerThatNeverReads(t *testing.T) {
	for kind, newStuck := range stuckWriters(t) {
		for opName, op := range writeOps {
			t.Run(kind+"/"+opName, func(t *testing.T) {
				defer goleak.VerifyNone(t)
				stuck := newStuck(t)
				inR, inW := io.Pipe() // what the Conn reads; the peer sends nothing
				c := NewConn(inR, stuck.w, &recorder{}, Options{})

				// The write returns at its deadline: not before it (the
				// deadline has passed when it returns; a writer with write
				// deadlines may say so before ctx's own timer has fired),
				// and not never (hangCeiling, a ceiling that means "did not
				// hang", not a measure).
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				deadline, _ := ctx.Deadline()
				var err error
				var returned time.Time
				waitReturns(t, hangCeiling, opName, func() {
					err = op(ctx, c)
					returned = time.Now()
				})
				cancel()
				if returned.Before(deadline) {
					t.Errorf("%s returned %v before its deadline", opName, deadline.Sub(returned))
				}
				if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s = %v, want ErrWriteFailed wrapping context.DeadlineExceeded", opName, err)
				}
				if !isClosed(c.Broken()) {
					t.Error("Broken not closed after a write timed out")
				}
				werr := c.WriteErr()
				if !errors.Is(werr, ErrWriteFailed) || !errors.Is(werr, context.DeadlineExceeded) {
					t.Errorf("WriteErr() = %v", werr)
				}
				c.mu.Lock()
				pending := len(c.pending)
				c.mu.Unlock()
				if pending != 0 {
					t.Errorf("%d calls pending after the write failed", pending)
				}

				// Every later write fails at once, even without a deadline
				// (one that waited would wait forever: hangCeiling catches
				// it).
				for laterName, later := range writeOps {
					var err error
					waitReturns(t, hangCeiling, "later "+laterName, func() { err = later(context.Background(), c) })
					if !errors.Is(err, ErrWriteFailed) || err.Error() != werr.Error() {
						t.Errorf("later %s = %v, want %v", laterName, err, werr)
					}
				}

				// The owner's contract: Close, close the writer, end the
				// read side, Wait.
				_ = c.Close()
				stuck.close()
				_ = inW.Close()
				waitReturns(t, hangCeiling, "Wait", c.Wait)
			})
		}
	}
}

// gateWriter blocks every Write until release is closed, and reports each
// Write it enters on entered.
type gateWriter struct {
	entered chan string
	release chan struct{}
	out     lockedBuffer
}

func newGateWriter() *gateWriter {
	return &gateWriter{entered: make(chan string, 16), release: make(chan struct{})}
}

func (g *gateWriter) Write(b []byte) (int, error) {
	g.entered <- string(b)
	<-g.release
	return g.out.Write(b)
}

func TestWriteWhoseContextEndsWhileQueuedKeepsTheStream(t *testing.T) {
	defer goleak.VerifyNone(t)
	g := newGateWriter()
	inR, inW := io.Pipe()
	c := NewConn(inR, g, &recorder{}, Options{})

	first := make(chan error, 1)
	go func() { first <- c.Notify(context.Background(), "first", nil) }()
	<-g.entered // the first write is in progress

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := c.Notify(ctx, "second", nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrWriteFailed) {
		t.Errorf("queued Notify = %v, want context.DeadlineExceeded alone", err)
	}
	if c.WriteErr() != nil || isClosed(c.Broken()) {
		t.Errorf("stream broken by a write that never started: %v", c.WriteErr())
	}

	close(g.release)
	if err := <-first; err != nil {
		t.Errorf("first Notify = %v", err)
	}
	if err := c.Notify(context.Background(), "third", nil); err != nil {
		t.Errorf("third Notify = %v", err)
	}
	want := `{"jsonrpc":"2.0","method":"first"}` + "\n" + `{"jsonrpc":"2.0","method":"third"}` + "\n"
	if got := g.out.take(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}

	_ = c.Close()
	_ = inW.Close()
	waitReturns(t, hangCeiling, "Wait", c.Wait)
}

func TestWriteWithEndedContextSendsNothing(t *testing.T) {
	out := &lockedBuffer{}
	inR, inW := io.Pipe()
	c := NewConn(inR, out, &recorder{}, Options{})
	defer func() {
		_ = inW.Close()
		c.Wait()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, op := range writeOps {
		if err := op(ctx, c); !errors.Is(err, context.Canceled) || errors.Is(err, ErrWriteFailed) {
			t.Errorf("%s = %v, want context.Canceled", name, err)
		}
	}
	if got := out.take(); got != "" {
		t.Errorf("wrote %q", got)
	}
	if c.WriteErr() != nil {
		t.Errorf("WriteErr() = %v", c.WriteErr())
	}
	if err := c.Notify(context.Background(), "ok", nil); err != nil {
		t.Errorf("Notify = %v", err)
	}
}

func TestBrokenStreamFailsQueuedWritesAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	g := newGateWriter()
	inR, inW := io.Pipe()
	c := NewConn(inR, g, &recorder{}, Options{})

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- c.Notify(ctx, "first", nil) }()
	<-g.entered

	// A write without a deadline waits behind the stuck one...
	qctx := newWaitingCtx(context.Background())
	queued := make(chan error, 1)
	go func() { queued <- c.Notify(qctx, "queued", nil) }()
	qctx.await(t, "the second Notify")
	// ...until the stuck one is cancelled mid-write, which breaks the stream.
	cancel()
	err := <-first
	if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Notify = %v, want ErrWriteFailed wrapping context.Canceled", err)
	}
	select {
	case err := <-queued:
		if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, context.Canceled) {
			t.Errorf("queued Notify = %v, want the sticky failure", err)
		}
	case <-time.After(hangCeiling):
		t.Fatal("queued Notify still waiting after the stream broke")
	}

	_ = c.Close()
	close(g.release) // the owner closing the writer, for this writer
	_ = inW.Close()
	waitReturns(t, hangCeiling, "Wait", c.Wait)
	if got := g.out.take(); got != `{"jsonrpc":"2.0","method":"first"}`+"\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestClosingTheWriterUnblocksAWriteWithoutDeadline(t *testing.T) {
	for kind, newStuck := range stuckWriters(t) {
		t.Run(kind, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			stuck := newStuck(t)
			w, entered := entering(stuck.w)
			inR, inW := io.Pipe()
			c := NewConn(inR, w, &recorder{}, Options{})
			notified := make(chan error, 1)
			go func() { notified <- c.Notify(context.Background(), "session/cancel", nil) }()
			select {
			case <-entered: // the writer goroutine is in Write (or about to block in it)
			case <-time.After(hangCeiling):
				t.Fatal("the Notify never reached the writer")
			}

			// Close does not interrupt a Write in progress: closing the
			// writer does, and the Notify returns the writer's error.
			_ = c.Close()
			stuck.close()
			_ = inW.Close()
			waitReturns(t, hangCeiling, "Wait", c.Wait)
			select {
			case err := <-notified:
				if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, stuck.closed) || errors.Is(err, ErrClosed) {
					t.Errorf("Notify = %v, want ErrWriteFailed wrapping %v", err, stuck.closed)
				}
				if werr := c.WriteErr(); werr == nil || werr.Error() != err.Error() {
					t.Errorf("WriteErr() = %v, want the Notify's error", werr)
				}
			case <-time.After(hangCeiling):
				t.Fatal("Notify did not return after the writer was closed")
			}
		})
	}
}

func TestWaitReturnsWhenOnlyTheReadSideEnds(t *testing.T) {
	defer goleak.VerifyNone(t)
	inR, inW := io.Pipe()
	c := NewConn(inR, io.Discard, &recorder{}, Options{})
	if err := c.Notify(context.Background(), "x", nil); err != nil {
		t.Fatal(err)
	}
	_ = inW.Close()
	waitReturns(t, hangCeiling, "Wait", c.Wait)
	if err := c.Notify(context.Background(), "late", nil); !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("Notify after the read side ended = %v, want ErrClosed wrapping io.EOF", err)
	}
	if c.WriteErr() != nil {
		t.Errorf("WriteErr() = %v", c.WriteErr())
	}
}

func TestCloseFailsWritesQueuedBehindAStuckOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	g := newGateWriter()
	inR, inW := io.Pipe()
	c := NewConn(inR, g, &recorder{}, Options{})
	first := make(chan error, 1)
	go func() { first <- c.Notify(context.Background(), "first", nil) }()
	<-g.entered
	qctx := newWaitingCtx(context.Background())
	queued := make(chan error, 1)
	go func() { queued <- c.Notify(qctx, "queued", nil) }()
	qctx.await(t, "the second Notify")

	_ = c.Close()
	select {
	case err := <-queued:
		if !errors.Is(err, ErrClosed) || err != errClosedByClose {
			t.Errorf("queued Notify = %v, want ErrClosed (Close was called)", err)
		}
	case <-time.After(hangCeiling):
		t.Fatal("queued Notify still waiting after Close")
	}
	close(g.release) // the owner closing the writer, for this writer
	if err := <-first; err != nil {
		t.Errorf("first Notify = %v", err)
	}
	_ = inW.Close()
	waitReturns(t, hangCeiling, "Wait", c.Wait)
}

// TestCancelWhileWritingAWholeLineKeepsTheStream: a context cancelled while
// its line is being written, with a deadline that bounds the write, waits
// for the write's outcome: a line written whole returns nil and leaves the
// stream usable (a turn cancelled during its prompt's hand-over can still
// send session/cancel, docs/behaviour.md#bounds).
func TestCancelWhileWritingAWholeLineKeepsTheStream(t *testing.T) {
	defer goleak.VerifyNone(t)
	g := newGateWriter()
	inR, inW := io.Pipe()
	c := NewConn(inR, g, &recorder{}, Options{})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	sent := make(chan error, 1)
	go func() { sent <- c.Notify(ctx, "prompt", nil) }()
	<-g.entered // the line is being written
	cancel()
	select {
	case <-c.Broken():
		t.Fatalf("a cancel during a write that has not failed broke the stream: %v", c.WriteErr())
	case <-time.After(100 * time.Millisecond): // the requester has seen its cancel by now
	}
	close(g.release)
	if err := <-sent; err != nil {
		t.Errorf("Notify of a line written whole = %v, want nil", err)
	}
	if err := c.Notify(context.Background(), "cancel", nil); err != nil {
		t.Errorf("the next Notify = %v", err)
	}
	want := `{"jsonrpc":"2.0","method":"prompt"}` + "\n" + `{"jsonrpc":"2.0","method":"cancel"}` + "\n"
	if got := g.out.take(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	_ = c.Close()
	_ = inW.Close()
	waitReturns(t, hangCeiling, "Wait", c.Wait)
}
