package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// item is one result of lineReader.next: a line, or a skipped line's length.
type item struct {
	line     string
	oversize int64
}

func (it item) String() string {
	if it.oversize > 0 {
		return fmt.Sprintf("oversize(%d)", it.oversize)
	}
	return strconv.Quote(it.line)
}

// drain reads every item until an error.
func drain(lr *lineReader) ([]item, error) {
	var items []item
	for {
		line, n, err := lr.next()
		if err != nil {
			return items, err
		}
		items = append(items, item{line: string(line), oversize: n})
	}
}

// referenceLines is the obvious, unbounded-memory definition of what the
// lineReader must produce (for input ending cleanly at EOF).
func referenceLines(input string, maxLine int) []item {
	if input == "" {
		return nil
	}
	parts := strings.SplitAfter(input, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	items := make([]item, 0, len(parts))
	for _, p := range parts {
		line := string(trimEOL([]byte(p)))
		if len(line) > maxLine {
			items = append(items, item{oversize: int64(len(line))})
			continue
		}
		items = append(items, item{line: line})
	}
	return items
}

// sameItems reports whether got matches the reference want for a bound of
// max: the same lines, and an oversize report wherever want has one, giving
// a length above the bound and at most the line's full length (a line can be
// reported before all of it has been read).
func sameItems(got, want []item, max int) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		g := got[i]
		if w.oversize > 0 {
			if g.oversize <= int64(max) || g.oversize > w.oversize {
				return false
			}
			continue
		}
		if g != w {
			return false
		}
	}
	return true
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name  string
		input string
		max   int
		want  []item
	}{
		{name: "empty", input: "", max: 8},
		{name: "lines", input: "a\nbb\n", max: 8, want: []item{{line: "a"}, {line: "bb"}}},
		{name: "crlf", input: "a\r\nb\r\n", max: 8, want: []item{{line: "a"}, {line: "b"}}},
		{name: "partial final line", input: "a\nlast", max: 8, want: []item{{line: "a"}, {line: "last"}}},
		{name: "partial final line with cr", input: "a\nlast\r", max: 8, want: []item{{line: "a"}, {line: "last"}}},
		{name: "empty lines", input: "\n\r\n\n", max: 8, want: []item{{}, {}, {}}},
		{name: "exactly the bound", input: "12345678\n", max: 8, want: []item{{line: "12345678"}}},
		{name: "exactly the bound with crlf", input: "12345678\r\nz", max: 8, want: []item{{line: "12345678"}, {line: "z"}}},
		{name: "one over the bound", input: "123456789\nz\n", max: 8, want: []item{{oversize: 9}, {line: "z"}}},
		{name: "one over the bound with crlf", input: "123456789\r\nz\n", max: 8, want: []item{{oversize: 9}, {line: "z"}}},
		{name: "long line kept", input: long + "\nz\n", max: 64, want: []item{{line: long}, {line: "z"}}},
		{name: "long line with crlf kept", input: long + "\r\nz\n", max: 40, want: []item{{line: long}, {line: "z"}}},
		{name: "long line skipped", input: long + "\nz\n", max: 39, want: []item{{oversize: 40}, {line: "z"}}},
		{name: "long line with crlf skipped", input: long + "\r\nz\n", max: 39, want: []item{{oversize: 40}, {line: "z"}}},
		{name: "cr split from lf at buffer end", input: strings.Repeat("y", 15) + "\r\nz\n", max: 15, want: []item{{line: strings.Repeat("y", 15)}, {line: "z"}}},
		{name: "cr split from lf, skipped", input: strings.Repeat("y", 31) + "\r\nz\n", max: 16, want: []item{{oversize: 31}, {line: "z"}}},
		{name: "long partial final line", input: "a\n" + long, max: 64, want: []item{{line: "a"}, {line: long}}},
		{name: "long partial final line skipped", input: "a\n" + long + "\r", max: 8, want: []item{{line: "a"}, {oversize: 16}}},
		{name: "long partial final line skipped at EOF", input: "a\n" + strings.Repeat("y", 13) + "\r", max: 16, want: []item{{line: "a"}, {line: strings.Repeat("y", 13)}}},
		{name: "reported before the rest", input: "a\n" + long + "\nz\n", max: 8, want: []item{{line: "a"}, {oversize: 16}, {line: "z"}}},
		{name: "cr at the bound is not yet over", input: strings.Repeat("y", 16) + "\r\nz\n", max: 16, want: []item{{line: strings.Repeat("y", 16)}, {line: "z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(tt.input), tt.max, 16)
			got, err := drain(lr)
			if err != io.EOF {
				t.Fatalf("error = %v, want io.EOF", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("items = %v\nwant    %v", got, tt.want)
			}
			if ref := referenceLines(tt.input, tt.max); !sameItems(tt.want, ref, tt.max) {
				t.Errorf("reference = %v (test table is wrong)", ref)
			}
			// EOF stays EOF.
			if _, _, err := lr.next(); err != io.EOF {
				t.Errorf("second error = %v", err)
			}
		})
	}
}

// oversizeCase builds an input with one long line between two notifications.
func oversizeInput(longLine string) string {
	return `{"jsonrpc":"2.0","method":"before"}` + "\n" + longLine + "\n" + `{"jsonrpc":"2.0","method":"after"}` + "\n"
}

func TestOversizeLine(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		max      int
		lineLen  int
		crlf     bool
		oversize bool
	}{
		{name: "11 MiB with a 1 MiB bound", max: mib, lineLen: 11 * mib, oversize: true},
		{name: "11 MiB crlf with a 1 MiB bound", max: mib, lineLen: 11 * mib, crlf: true, oversize: true},
		{name: "exactly 1 MiB kept", max: mib, lineLen: mib},
		{name: "exactly 1 MiB crlf kept", max: mib, lineLen: mib, crlf: true},
		{name: "default bound plus one", lineLen: DefaultMaxLineBytes + 1, oversize: true},
		{name: "exactly the default bound", lineLen: DefaultMaxLineBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := notificationOfLength(tt.lineLen)
			if tt.crlf {
				line += "\r"
			}
			h := &recorder{}
			c := NewConn(strings.NewReader(oversizeInput(line)), io.Discard, h, Options{MaxLineBytes: tt.max})
			c.Wait()
			if c.Err() != io.EOF {
				t.Fatalf("Err() = %v", c.Err())
			}
			methods := make([]string, 0, 3)
			for _, n := range h.notifications {
				methods = append(methods, n.method)
			}
			if tt.oversize {
				// Reported once the bound was passed, with the bytes
				// seen by then.
				maxLine := tt.max
				if maxLine == 0 {
					maxLine = DefaultMaxLineBytes
				}
				if len(h.oversize) != 1 || h.oversize[0] <= int64(maxLine) || h.oversize[0] > int64(tt.lineLen) {
					t.Errorf("oversize = %v, want one in (%d, %d]", h.oversize, maxLine, tt.lineLen)
				}
				if fmt.Sprint(methods) != "[before after]" {
					t.Errorf("methods = %v", methods)
				}
				// The discarded line was not buffered whole.
				if limit := maxLine + 2 + readBufferSize; c.lines.accPeak > limit {
					t.Errorf("accumulator grew to %d bytes, bound %d", c.lines.accPeak, limit)
				}
			} else {
				if len(h.oversize) != 0 {
					t.Errorf("oversize = %v, want none", h.oversize)
				}
				if fmt.Sprint(methods) != "[before big after]" {
					t.Errorf("methods = %v", methods)
				}
			}
			if len(h.malformed) != 0 {
				t.Errorf("malformed = %d lines", len(h.malformed))
			}
		})
	}
}

// notificationOfLength returns a valid notification line of exactly n bytes.
func notificationOfLength(n int) string {
	const head, tail = `{"jsonrpc":"2.0","method":"big","params":{"text":"`, `"}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

func TestOversizeLineThroughPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := &recorder{}
	c := NewConn(r, io.Discard, h, Options{MaxLineBytes: 4096})
	var writeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer w.Close()
		bw := bufio.NewWriter(w)
		_, writeErr = bw.WriteString(oversizeInput(notificationOfLength(3 << 20)))
		if err := bw.Flush(); writeErr == nil {
			writeErr = err
		}
	})
	c.Wait()
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if len(h.oversize) != 1 || h.oversize[0] <= 4096 || h.oversize[0] > 3<<20 || len(h.notifications) != 2 {
		t.Errorf("oversize %v, notifications %d", h.oversize, len(h.notifications))
	}
}

// slowCounter checks that notifications arrive in sequence; every 4096th
// one sleeps so that the writer fills the pipe and blocks.
type slowCounter struct {
	recorder
	next       int
	outOfOrder int
}

func (s *slowCounter) HandleNotification(method string, params json.RawMessage) {
	// params is {"seq":N,...}: read N without decoding the rest.
	rest := params[len(`{"seq":`):]
	n, err := strconv.Atoi(string(rest[:bytes.IndexByte(rest, ',')]))
	if err != nil || n != s.next || method != "session/update" {
		s.outOfOrder++
	}
	s.next++
	if s.next%4096 == 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

func TestBurstOfNotificationsThroughPipe(t *testing.T) {
	const total = 1_000_000
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := &slowCounter{}
	c := NewConn(r, io.Discard, h, Options{})
	var writeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer w.Close()
		bw := bufio.NewWriterSize(w, 64<<10)
		var line []byte
		for i := range total {
			line = append(line[:0], `{"jsonrpc":"2.0","method":"session/update","params":{"seq":`...)
			line = strconv.AppendInt(line, int64(i), 10)
			line = append(line, `,"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk"}}}}`+"\n"...)
			if _, err := bw.Write(line); err != nil {
				writeErr = err
				return
			}
		}
		writeErr = bw.Flush()
	})
	c.Wait()
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if !errors.Is(c.Err(), io.EOF) {
		t.Errorf("Err() = %v", c.Err())
	}
	if h.next != total || h.outOfOrder != 0 {
		t.Errorf("handled %d notifications (%d out of order), want %d in order", h.next, h.outOfOrder, total)
	}
	if len(h.malformed) != 0 || len(h.oversize) != 0 {
		t.Errorf("malformed %d, oversize %d", len(h.malformed), len(h.oversize))
	}
}

// oversizeWatcher is a recorder that also signals every oversize report.
type oversizeWatcher struct {
	recorder
	reported chan int64
}

func (w *oversizeWatcher) HandleOversize(n int64) {
	w.recorder.HandleOversize(n)
	w.reported <- n
}

// stepReader is a stream whose peer hands over one chunk at a time and can
// tell when the reader has consumed every byte sent and asked for more.
type stepReader struct {
	chunks  chan []byte   // unbuffered: send returns once Read took the chunk
	waiting chan struct{} // a Read found nothing left and waits; buffered
	ended   chan struct{}
	once    sync.Once
	rest    []byte // Read's goroutine only
}

func newStepReader() *stepReader {
	return &stepReader{chunks: make(chan []byte), waiting: make(chan struct{}, 1), ended: make(chan struct{})}
}

func (s *stepReader) Read(p []byte) (int, error) {
	if len(s.rest) == 0 {
		select {
		case s.waiting <- struct{}{}:
		default:
		}
		select {
		case s.rest = <-s.chunks:
		case <-s.ended:
			return 0, io.EOF
		}
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

// send hands chunk to the reader; it returns once a Read has taken it (not
// necessarily all of it).
func (s *stepReader) send(chunk string) { s.chunks <- []byte(chunk) }

// end makes the stream end (EOF) once what was sent is consumed.
func (s *stepReader) end() { s.once.Do(func() { close(s.ended) }) }

// awaitWaiting waits until a Read has consumed everything sent and waits for
// more: the reader has handled every byte so far. Reports from before the
// last send are taken by the previous awaitWaiting (send only returns once
// a Read is past its report), so the one taken here is fresh.
func (s *stepReader) awaitWaiting(t *testing.T) {
	t.Helper()
	select {
	case <-s.waiting:
	case <-time.After(hangCeiling):
		t.Fatalf("the connection did not ask for more bytes within %v", hangCeiling)
	}
}

func TestOversizeReportedBeforeTheNewline(t *testing.T) {
	tests := []struct {
		name string
		max  int
		// first is sent, then nothing until the report; n is the report.
		first string
		n     int64
		// quiet is sent before first and must not be reported: with a
		// trailing '\r', max bytes may still be a line that fits.
		quiet string
	}{
		{name: "bound below the read buffer", max: 4096, first: strings.Repeat("a", 4097), n: 4097},
		{name: "bound above the read buffer", max: 100_000, first: strings.Repeat("a", 100_001), n: 100_001},
		{name: "bound a multiple of the read buffer", max: 2 * readBufferSize, first: strings.Repeat("a", 2*readBufferSize+1), n: 2*readBufferSize + 1},
		{name: "cr at the bound waits for one more byte", max: 4096, quiet: strings.Repeat("a", 4096) + "\r", first: "b", n: 4098},
		{name: "cr at the bound above the read buffer", max: 100_000, quiet: strings.Repeat("a", 100_000) + "\r", first: "b", n: 100_002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &oversizeWatcher{reported: make(chan int64, 4)}
			peer := newStepReader()
			c := NewConn(peer, io.Discard, h, Options{MaxLineBytes: tt.max})
			defer func() {
				peer.end()
				_ = c.Close()
				c.Wait()
			}()
			peer.awaitWaiting(t) // the first read
			if tt.quiet != "" {
				// Once the connection waits for more bytes, it has
				// handled everything quiet could make it report.
				peer.send(tt.quiet)
				peer.awaitWaiting(t)
				select {
				case n := <-h.reported:
					t.Fatalf("reported %d bytes before the bound was certainly passed", n)
				default:
				}
			}
			peer.send(tt.first) // and then nothing: no newline, the stream stays open
			select {
			case n := <-h.reported:
				if n != tt.n {
					t.Errorf("HandleOversize(%d), want %d (the bytes seen so far)", n, tt.n)
				}
			case <-time.After(hangCeiling):
				t.Fatal("HandleOversize not called while the line is still arriving")
			}

			// The rest of the line is discarded as it arrives, then reading
			// goes on with the next line.
			for range 4 {
				peer.send(strings.Repeat("z", 50_000))
			}
			peer.send("\n" + `{"jsonrpc":"2.0","method":"after"}` + "\n")
			peer.end()
			c.Wait()
			if len(h.oversize) != 1 || len(h.malformed) != 0 {
				t.Errorf("oversize %v, malformed %v", h.oversize, h.malformed)
			}
			if len(h.notifications) != 1 || h.notifications[0].method != "after" {
				t.Errorf("notifications = %v", h.notifications)
			}
			if limit := tt.max + 2 + readBufferSize; c.lines.accPeak > limit {
				t.Errorf("accumulator grew to %d bytes, bound %d", c.lines.accPeak, limit)
			}
		})
	}
}

func TestOversizeLineEndingAtEOFWhileSkipped(t *testing.T) {
	// Reported early, then the stream ends before the newline: one report,
	// and a clean EOF.
	h := readAll(t, `{"jsonrpc":"2.0","method":"before"}`+"\n"+strings.Repeat("a", 200_000), Options{MaxLineBytes: 70_000})
	if len(h.oversize) != 1 || h.oversize[0] <= 70_000 || len(h.notifications) != 1 {
		t.Errorf("oversize %v, notifications %v", h.oversize, h.notifications)
	}
}

// scriptedReader hands out its chunks one Read at a time (a chunk larger
// than the caller's buffer is handed out over several), and calls look
// before each Read.
type scriptedReader struct {
	chunks [][]byte
	look   func(p []byte)
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	if s.look != nil {
		s.look(p)
	}
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// TestLineReaderBuffers: a quiet reader holds only its idle buffer; a
// flowing stream gets the flowing one; lines longer than it still come
// out whole; and the idle hook runs exactly before the reads that follow
// a read that drained the peer.
func TestLineReaderBuffers(t *testing.T) {
	short := strings.Repeat(`{"jsonrpc":"2.0","method":"m"}`+"\n", 4000) // ~124 KB: fills every read
	long := strings.Repeat("y", 300_000) + "\n"
	sr := &scriptedReader{chunks: [][]byte{[]byte("a\n"), []byte(short), []byte(long), []byte(long), []byte("z\n")}}
	// Two collections empty the shared buffers, which earlier tests may
	// have left larger than these lines need.
	runtime.GC()
	runtime.GC()
	lr := newLineReader(sr, 0, readBufferSize)
	var bufs []int
	idles := 0
	sr.look = func(p []byte) { bufs = append(bufs, len(lr.buf)) }
	lr.idle = func() { idles++ }
	items, err := drain(lr)
	if err != io.EOF {
		t.Fatalf("error = %v", err)
	}
	want := referenceLines("a\n"+short+long+long+"z\n", DefaultMaxLineBytes)
	if !sameItems(items, want, DefaultMaxLineBytes) {
		t.Fatalf("lines differ from the reference (%d items, want %d)", len(items), len(want))
	}
	if bufs[0] != idleBufferSize || bufs[1] != idleBufferSize {
		t.Errorf("the first reads got %v bytes of buffer, want the idle %d", bufs[:2], idleBufferSize)
	}
	flowing := false
	for _, n := range bufs {
		flowing = flowing || n == readBufferSize
	}
	if !flowing {
		t.Errorf("no read used the flowing buffer: %v", bufs)
	}
	if last := bufs[len(bufs)-1]; last != idleBufferSize || lr.flow != nil {
		t.Errorf("the last read (after the stream drained) got %d bytes of buffer, want the idle %d", last, idleBufferSize)
	}
	if lr.accPeak > 2*len(long) {
		t.Errorf("accumulator peaked at %d bytes for %d-byte lines", lr.accPeak, len(long))
	}
	// Short reads: before the first read, after "a\n", after the end of
	// each long line and after "z\n" (the read that sees EOF).
	if idles < 3 || idles > len(bufs) {
		t.Errorf("idle hook ran %d times for %d reads", idles, len(bufs))
	}
}

// idleCounter is a recorder that, on each HandleIdle, reports how many
// notifications it had handled by then.
type idleCounter struct {
	recorder
	idle chan int
}

func (h *idleCounter) HandleIdle() { h.idle <- len(h.notifications) }

// TestHandleIdle: HandleIdle runs once the lines that arrived together
// were all handled, before the connection waits for more.
func TestHandleIdle(t *testing.T) {
	connR, peerW := io.Pipe()
	h := &idleCounter{idle: make(chan int, 8)}
	c := NewConn(connR, io.Discard, h, Options{})
	if n := <-h.idle; n != 0 {
		t.Fatalf("first HandleIdle after %d notifications, want 0", n)
	}
	batch := strings.Repeat(`{"jsonrpc":"2.0","method":"m"}`+"\n", 3)
	if _, err := io.WriteString(peerW, batch); err != nil {
		t.Fatal(err)
	}
	if n := <-h.idle; n != 3 {
		t.Errorf("HandleIdle after %d notifications, want all 3 of the batch", n)
	}
	_ = peerW.Close()
	_ = c.Close()
	c.Wait()
}
