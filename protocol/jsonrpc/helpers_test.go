package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// notification is a recorded HandleNotification call.
type notification struct {
	method string
	params string
}

// malformed is a recorded HandleMalformed call.
type malformed struct {
	line string
	err  error
}

// recorder is a Handler that records every call. onRequest, when set, is
// called for each request (on the read goroutine).
type recorder struct {
	mu            sync.Mutex
	notifications []notification
	requests      []Request
	malformed     []malformed
	oversize      []int64
	onRequest     func(Request)
}

func (r *recorder) HandleNotification(method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notifications = append(r.notifications, notification{method: method, params: string(params)})
}

func (r *recorder) HandleRequest(req Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req)
	fn := r.onRequest
	r.mu.Unlock()
	if fn != nil {
		fn(req)
	}
}

func (r *recorder) HandleMalformed(line []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.malformed = append(r.malformed, malformed{line: string(line), err: err})
}

func (r *recorder) HandleOversize(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.oversize = append(r.oversize, n)
}

func (r *recorder) notificationCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notifications)
}

// readAll runs a Conn over a fixed input until EOF and returns what the
// handler saw.
func readAll(t *testing.T, input string, opts Options) *recorder {
	t.Helper()
	h := &recorder{}
	c := NewConn(strings.NewReader(input), io.Discard, h, opts)
	c.Wait()
	if err := c.Err(); !errors.Is(err, io.EOF) {
		t.Fatalf("Err() = %v, want io.EOF", err)
	}
	return h
}

// peer is the far end of a Conn connected through io.Pipe pairs: it reads
// what the Conn writes and writes what the Conn reads.
type peer struct {
	t     *testing.T
	conn  *Conn
	h     *recorder
	in    chan string // lines written by the Conn
	w     *io.PipeWriter
	r     *io.PipeReader
	wmu   sync.Mutex
	wg    sync.WaitGroup
	close sync.Once
}

// newPeer connects a Conn (with handler h) to a test peer. Cleanup ends the
// stream, waits for the read loop, and stops the peer.
func newPeer(t *testing.T, h *recorder, opts Options) *peer {
	t.Helper()
	return newPeerWith(t, h, h, opts)
}

// newPeerWith is newPeer with a handler that wraps the recorder rec.
func newPeerWith(t *testing.T, h Handler, rec *recorder, opts Options) *peer {
	t.Helper()
	connR, peerW := io.Pipe()
	peerR, connW := io.Pipe()
	p := &peer{t: t, h: rec, in: make(chan string, 1024), w: peerW, r: peerR}
	p.conn = NewConn(connR, connW, h, opts)
	p.wg.Go(func() {
		defer close(p.in)
		sc := bufio.NewScanner(peerR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			p.in <- sc.Text()
		}
	})
	t.Cleanup(func() {
		p.end()
		p.conn.Wait()
		_ = peerR.CloseWithError(io.ErrClosedPipe)
		for range p.in { // let the reader goroutine finish
		}
		p.wg.Wait()
	})
	return p
}

// send writes one line (a '\n' is appended) to the Conn.
func (p *peer) send(line string) {
	p.t.Helper()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

// end closes the stream the Conn reads (EOF).
func (p *peer) end() {
	p.close.Do(func() { _ = p.w.Close() })
}

// hangCeiling is how long a test waits for something that happens at once
// before it concludes that it never will. It is a ceiling meaning "did not
// hang", never a measure of speed: only a defect comes near it.
const hangCeiling = 10 * time.Second

// recv returns the next line the Conn wrote. It fails the test when none
// comes within hangCeiling (an unanswered request, say).
func (p *peer) recv() string {
	p.t.Helper()
	select {
	case line, ok := <-p.in:
		if !ok {
			p.t.Fatal("connection stopped writing")
		}
		return line
	case <-time.After(hangCeiling):
		p.t.Fatalf("the connection wrote nothing within %v", hangCeiling)
		return ""
	}
}

// sentRequest is the decoded shape of a request the Conn sent.
type sentRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// recvRequest reads and decodes the next request the Conn sent.
func (p *peer) recvRequest() sentRequest {
	p.t.Helper()
	line := p.recv()
	var req sentRequest
	if err := json.Unmarshal([]byte(line), &req); err != nil || req.JSONRPC != "2.0" {
		p.t.Fatalf("peer got %q, not a request (%v)", line, err)
	}
	return req
}

// syncWrites returns once every write handed to the Conn's writer goroutine
// before the call has finished: it writes one more line and reads it. (A
// write's context that ends while the writer is still inside Write breaks
// the stream, even when the peer already has the bytes; tests that cancel a
// context right after the peer read a line call this first.)
func (p *peer) syncWrites() {
	p.t.Helper()
	if err := p.conn.Notify(context.Background(), "$/test/sync", nil); err != nil {
		p.t.Fatalf("sync Notify: %v", err)
	}
	if line, want := p.recv(), `{"jsonrpc":"2.0","method":"$/test/sync"}`; line != want {
		p.t.Fatalf("peer got %s, want %s", line, want)
	}
}
