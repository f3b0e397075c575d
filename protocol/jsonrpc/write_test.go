package jsonrpc

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// slack bounds how long past its deadline a write may take to return, and
// how long "at once" may take on a loaded machine.
const slack = time.Second

// stuckWriter is a writer whose reader never reads, and the owner's way to
// close it.
type stuckWriter struct {
	w     io.Writer
	close func()
}

// stuckWriters returns the kinds of peer that stopped reading its input.
func stuckWriters(t *testing.T) map[string]func(t *testing.T) stuckWriter {
	return map[string]func(t *testing.T) stuckWriter{
		"io.Pipe nobody reads": func(t *testing.T) stuckWriter {
			pr, pw := io.Pipe()
			return stuckWriter{w: pw, close: func() {
				_ = pw.Close()
				_ = pr.Close()
			}}
		},
		"full os.Pipe": func(t *testing.T) stuckWriter {
			r, w := fullPipe(t)
			return stuckWriter{w: w, close: func() {
				_ = w.Close()
				_ = r.Close()
			}}
		},
		"full os.Pipe without write deadlines": func(t *testing.T) stuckWriter {
			r, w := fullPipe(t)
			return stuckWriter{w: struct{ io.Writer }{w}, close: func() {
				_ = w.Close()
				_ = r.Close()
			}}
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

				const timeout = 100 * time.Millisecond
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				err := op(ctx, c)
				cancel()
				elapsed := time.Since(start)
				if elapsed < timeout || elapsed > timeout+slack {
					t.Errorf("%s returned after %v, want about %v", opName, elapsed, timeout)
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

				// Every later write fails at once, even without a deadline.
				for laterName, later := range writeOps {
					start := time.Now()
					err := later(context.Background(), c)
					if d := time.Since(start); d > slack {
						t.Errorf("later %s took %v", laterName, d)
					}
					if !errors.Is(err, ErrWriteFailed) || err.Error() != werr.Error() {
						t.Errorf("later %s = %v, want %v", laterName, err, werr)
					}
				}

				// The owner's contract: Close, close the writer, end the
				// read side, Wait.
				_ = c.Close()
				stuck.close()
				_ = inW.Close()
				waitReturns(t, 5*time.Second, "Wait", c.Wait)
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
	waitReturns(t, 5*time.Second, "Wait", c.Wait)
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
	queued := make(chan error, 1)
	go func() { queued <- c.Notify(context.Background(), "queued", nil) }()
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
	case <-time.After(slack):
		t.Fatal("queued Notify still waiting after the stream broke")
	}

	_ = c.Close()
	close(g.release) // the owner closing the writer, for this writer
	_ = inW.Close()
	waitReturns(t, 5*time.Second, "Wait", c.Wait)
	if got := g.out.take(); got != `{"jsonrpc":"2.0","method":"first"}`+"\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestClosingTheWriterUnblocksAWriteWithoutDeadline(t *testing.T) {
	for kind, newStuck := range stuckWriters(t) {
		t.Run(kind, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			stuck := newStuck(t)
			inR, inW := io.Pipe()
			c := NewConn(inR, stuck.w, &recorder{}, Options{})
			notified := make(chan error, 1)
			go func() { notified <- c.Notify(context.Background(), "session/cancel", nil) }()
			time.Sleep(20 * time.Millisecond) // let it reach the writer

			_ = c.Close()
			stuck.close()
			_ = inW.Close()
			waitReturns(t, 5*time.Second, "Wait", c.Wait)
			select {
			case err := <-notified:
				if !errors.Is(err, ErrWriteFailed) && !errors.Is(err, ErrClosed) {
					t.Errorf("Notify = %v, want ErrWriteFailed or ErrClosed", err)
				}
			case <-time.After(slack):
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
	waitReturns(t, 5*time.Second, "Wait", c.Wait)
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
	queued := make(chan error, 1)
	go func() { queued <- c.Notify(context.Background(), "queued", nil) }()
	time.Sleep(20 * time.Millisecond) // let it queue

	_ = c.Close()
	select {
	case err := <-queued:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("queued Notify = %v, want ErrClosed", err)
		}
	case <-time.After(slack):
		t.Fatal("queued Notify still waiting after Close")
	}
	close(g.release) // the owner closing the writer, for this writer
	if err := <-first; err != nil {
		t.Errorf("first Notify = %v", err)
	}
	_ = inW.Close()
	waitReturns(t, 5*time.Second, "Wait", c.Wait)
}
