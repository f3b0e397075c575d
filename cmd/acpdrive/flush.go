package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// maxOutputLatency bounds how long printed output may wait in the buffer
// while the runtime keeps streaming without a pause.
const maxOutputLatency = 10 * time.Millisecond

// outputBufferSize is the output buffer; a fuller one is written at once.
const outputBufferSize = 64 << 10

// flushWriter buffers the CLI's standard output so that a fast stream
// costs one write system call per batch instead of one per chunk and per
// event, and writes the batch out at the moments a reader of the output
// notices (docs/behaviour.md#cli):
//   - when the session has handled everything the runtime sent so far and
//     waits for more (idle, called by the session's reader);
//   - at the latest maxOutputLatency after the first byte that is waiting,
//     for a stream that never pauses;
//   - when the run ends (close), and whenever the printer asks (flush),
//     e.g. before something else is drawn on the terminal.
//
// Every method but idle and close must be called with the printer's lock
// held, which mu is; the timer goroutine takes it too.
type flushWriter struct {
	mu *sync.Mutex
	w  *bufio.Writer

	kick chan struct{} // the buffer went from empty to non-empty
	done chan struct{}
	wg   sync.WaitGroup
}

// newFlushWriter buffers w; mu is the lock every writer of it holds.
func newFlushWriter(w io.Writer, mu *sync.Mutex) *flushWriter {
	f := &flushWriter{mu: mu, w: bufio.NewWriterSize(w, outputBufferSize), kick: make(chan struct{}, 1), done: make(chan struct{})}
	f.wg.Go(f.timerLoop)
	return f
}

// Write buffers p. mu must be held.
func (f *flushWriter) Write(p []byte) (int, error) {
	wasEmpty := f.w.Buffered() == 0
	n, err := f.w.Write(p)
	if wasEmpty && f.w.Buffered() > 0 {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	return n, err
}

// flush writes out what is buffered. mu must be held.
func (f *flushWriter) flush() {
	if f.w.Buffered() > 0 {
		_ = f.w.Flush()
	}
}

// idle flushes: the session's reader is about to wait for the runtime.
func (f *flushWriter) idle() {
	f.mu.Lock()
	f.flush()
	f.mu.Unlock()
}

// timerLoop flushes what is buffered maxOutputLatency after a kick (bytes
// that arrived since an earlier flush only go out sooner).
func (f *flushWriter) timerLoop() {
	t := time.NewTimer(maxOutputLatency)
	t.Stop()
	for {
		select {
		case <-f.done:
			t.Stop()
			return
		case <-f.kick:
		}
		t.Reset(maxOutputLatency)
		select {
		case <-f.done:
			t.Stop()
			return
		case <-t.C:
		}
		f.idle()
	}
}

// close stops the timer goroutine and writes out what is left.
func (f *flushWriter) close() {
	close(f.done)
	f.wg.Wait()
	f.idle()
}
