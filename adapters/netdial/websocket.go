package netdial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
)

// MsgResumeFailed starts the exit message's cause when a server refused
// to resume a WebSocket connection (stream/resume_failed): what was
// missed is no longer held, so the turn cannot go on
// (docs/behaviour.md#network).
const MsgResumeFailed = "the server could not resume the connection"

// wsConn is the client's side of a WebSocket connection
// (docs/behaviour.md#network). When the server's initialize answer
// advertised capabilities.transport.resumable and its upgrade answer
// named the connection (Acp-Connection-Id), a socket that drops is
// replaced: a new upgrade naming the connection whose first frame is
// stream/resume with the last cursor received (up to reopenTries in a
// row, after reopenPause, doubled each time), and the messages after it
// come again, once; the server's answer counts the messages of this side
// that reached the runtime, and the ones after them are sent again (the
// last outboxMessages, at most outboxBytes, are kept for that). Otherwise,
// or when the server refuses, the drop ends the process.
type wsConn struct {
	l      *Launcher
	client *http.Client
	hdr    http.Header
	p      *process
	ctx    context.Context // ends when this side ends the link
	cancel context.CancelFunc

	mu        sync.Mutex
	c         *websocket.Conn
	changed   chan struct{} // closed and replaced when c changes or the link is over
	over      bool          // no more sockets
	conn      string        // the connection id, "" when the server named none
	initID    []byte        // the id of the initialize awaiting its answer
	resumable atomic.Bool   // the server advertised the resume
	leaving   atomic.Bool   // this side began the close handshake: no resume
	cursor    []byte        // the last cursor received (the reader's own)
	buf       bytes.Buffer  // the frame being read (the reader's own)

	// outMu orders this side's messages: each is kept and written under
	// it, and a resume sends the kept ones again under it, before the new
	// socket is used by anyone else.
	outMu    sync.Mutex
	outbox   [][]byte // the latest messages sent, the first numbered outBase
	outBase  int64
	outBytes int
	unkept   bool // the server offers no resume: keep nothing
}

const (
	// outboxMessages and outboxBytes bound what this side keeps of its
	// own messages to send again after a resume; a resume that needs an
	// older one fails (docs/behaviour.md#network-resume).
	outboxMessages = 1024
	outboxBytes    = 16 << 20
)

// keep adds msg to the outbox, dropping the oldest past the bounds. The
// caller holds outMu.
func (w *wsConn) keep(msg []byte) {
	if w.unkept {
		w.outBase++
		return
	}
	w.outbox = append(w.outbox, bytes.Clone(msg))
	w.outBytes += len(msg)
	for len(w.outbox) > outboxMessages || (w.outBytes > outboxBytes && len(w.outbox) > 1) {
		w.outBytes -= len(w.outbox[0])
		w.outbox[0] = nil
		w.outbox = w.outbox[1:]
		w.outBase++
	}
}

// resend writes on c the messages after the first received ones, the
// server's count (nil when it gave none: nothing is sent again). The
// caller holds outMu.
func (w *wsConn) resend(ctx context.Context, c *websocket.Conn, received *int64) error {
	if received == nil {
		return nil
	}
	sent := w.outBase + int64(len(w.outbox))
	switch {
	case *received < w.outBase:
		return &errResumeRefused{fmt.Sprintf("the client no longer holds its messages after the %d the runtime received", *received)}
	case *received > sent:
		return &errResumeRefused{fmt.Sprintf("the server counts %d messages received, more than the %d sent", *received, sent)}
	}
	for _, msg := range w.outbox[*received-w.outBase:] {
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			return err
		}
	}
	return nil
}

// dialWebSocket opens the WebSocket, the token in its Authorization
// header.
func dialWebSocket(ctx context.Context, l *Launcher, token string) (*process, error) {
	w := &wsConn{l: l, hdr: http.Header{}, changed: make(chan struct{})}
	if token != "" {
		w.hdr.Set("Authorization", "Bearer "+token)
	}
	w.client = &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: l.tls, ForceAttemptHTTP2: false,
	}}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if r := l.opts.Resume; r != nil {
		if err := w.resumeFirst(ctx, r); err != nil {
			w.cancel()
			return nil, err
		}
	} else {
		c, resp, err := w.dial(ctx)
		if err != nil {
			w.cancel()
			return nil, err
		}
		w.c = c
		w.conn = resp.Header.Get(netwire.HeaderConnection)
	}
	p := newProcess(l.addr.URL)
	w.p = p
	p.closeNow = sync.OnceValue(w.closeNow)
	p.stdout = &netwire.FrameReader{Next: w.next}
	s := &wsStdin{w: w}
	s.lw.Send = s.send
	p.stdin = s
	return p, nil
}

// resumeFirst makes the first socket a resume of the connection r names
// (Options.Resume): the link is resumable from the start.
func (w *wsConn) resumeFirst(ctx context.Context, r *Resume) error {
	w.conn, w.cursor = r.Connection, []byte(r.Cursor)
	w.resumable.Store(true)
	w.hdr.Set(netwire.HeaderConnection, r.Connection)
	stop := context.AfterFunc(ctx, w.cancel)
	defer stop()
	c, received, err := w.resumeOnce()
	var refused *errResumeRefused
	switch {
	case errors.As(err, &refused):
		return domain.WrapError(domain.KindPortExit, refused.Error(), err)
	case err != nil:
		var ae *domain.AgentError
		if errors.As(err, &ae) {
			return err
		}
		return domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+w.l.addr.URL, err)
	}
	w.c = c
	if received != nil { // this side's messages are numbered after the earlier client's
		w.outBase = *received
	}
	return nil
}

// dial makes one upgrade; after the first it names the connection.
func (w *wsConn) dial(ctx context.Context) (*websocket.Conn, *http.Response, error) {
	c, resp, err := websocket.Dial(ctx, w.l.addr.URL, &websocket.DialOptions{HTTPClient: w.client, HTTPHeader: w.hdr})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return nil, nil, w.l.tokenRefused(resp.Status)
		}
		return nil, nil, domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+w.l.addr.URL, err)
	}
	c.SetReadLimit(netwire.MaxMessageBytes)
	return c, resp, nil
}

// socket is the socket in use and the channel closed when it changes.
func (w *wsConn) socket() (*websocket.Conn, chan struct{}, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.c, w.changed, w.over
}

// closeNow ends the link at once and any resume in progress.
func (w *wsConn) closeNow() error {
	w.cancel()
	w.mu.Lock()
	c := w.c
	w.endLocked()
	w.mu.Unlock()
	return c.CloseNow()
}

// endLocked marks that no socket follows.
func (w *wsConn) endLocked() {
	if !w.over {
		w.over = true
		close(w.changed)
	}
}

// next returns the next message, replacing a dropped socket when it can.
func (w *wsConn) next() ([]byte, error) {
	for {
		c, _, _ := w.socket()
		_, r, err := c.Reader(context.Background())
		if err == nil {
			w.buf.Reset()
			_, err = w.buf.ReadFrom(r)
		}
		if err == nil {
			return w.received(w.buf.Bytes()), nil
		}
		normal := websocket.CloseStatus(err) == websocket.StatusNormalClosure
		if !normal && !w.p.closing.Load() && !w.leaving.Load() && w.resumable.Load() && w.conn != "" {
			_ = c.CloseNow() // a write blocked on the dead socket returns
			if rerr := w.resume(); rerr == nil {
				continue
			} else {
				err = rerr
			}
		}
		w.mu.Lock()
		w.endLocked()
		w.mu.Unlock()
		w.p.ended(err, normal)
		if normal {
			return nil, io.EOF // the stream's end, as a process's
		}
		return nil, err
	}
}

// received takes msg's cursor out of it (what the reader gets is the
// runtime's message as it wrote it) and notes it, and whether the
// initialize answer advertises the resume.
func (w *wsConn) received(msg []byte) []byte {
	msg, cur := netwire.StripCursor(msg)
	if cur != nil {
		w.cursor = append(w.cursor[:0], cur...)
	}
	if w.resumable.Load() {
		return msg
	}
	w.mu.Lock()
	id := w.initID
	w.mu.Unlock()
	if id == nil {
		return msg
	}
	if !netwire.Answers(msg, id) {
		return msg
	}
	w.mu.Lock()
	w.initID = nil
	w.mu.Unlock()
	if _, ok := netwire.Resumable(msg); ok {
		w.resumable.Store(true)
	} else { // no resume: nothing is ever sent again, so nothing is kept
		w.outMu.Lock()
		w.unkept = true
		w.outBase += int64(len(w.outbox))
		w.outbox, w.outBytes = nil, 0
		w.outMu.Unlock()
	}
	return msg
}

// noteInit remembers the id of an initialize request being sent.
func (w *wsConn) noteInit(msg []byte) {
	if w.resumable.Load() {
		return
	}
	if id := netwire.InitializeID(msg); id != nil {
		w.mu.Lock()
		w.initID = id
		w.mu.Unlock()
	}
}

// errResumeRefused is a resume the server refused: no other try helps.
type errResumeRefused struct{ reason string }

func (e *errResumeRefused) Error() string { return MsgResumeFailed + ": " + e.reason }

// resume replaces the dropped socket: up to reopenTries upgrades naming
// the connection, each sending stream/resume with the last cursor.
func (w *wsConn) resume() error {
	w.hdr.Set(netwire.HeaderConnection, w.conn)
	pause := reopenPause
	var err error
	for range reopenTries {
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-w.ctx.Done():
			t.Stop()
			return errClosed
		}
		pause *= 2
		var c *websocket.Conn
		var received *int64
		if c, received, err = w.resumeOnce(); err == nil {
			if err = w.switchTo(c, received); err == nil {
				w.l.opts.Logger.Info("runtime connection resumed", "url", w.l.addr.URL, "cursor", string(w.cursor))
				return nil
			}
			if errors.Is(err, errClosed) {
				return err
			}
		}
		var refused *errResumeRefused
		if errors.As(err, &refused) {
			return err
		}
		w.l.opts.Logger.Debug("runtime connection resume failed", "url", w.l.addr.URL, "error", err)
	}
	return fmt.Errorf("the connection could not be resumed: %w", err)
}

// switchTo sends again on c what the server did not receive, then makes
// c the socket in use; no message of this side is written meanwhile.
func (w *wsConn) switchTo(c *websocket.Conn, received *int64) error {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	ctx, cancel := context.WithTimeout(w.ctx, w.l.opts.ConnectTimeout)
	err := w.resend(ctx, c, received)
	cancel()
	if err != nil {
		_ = c.CloseNow()
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over { // this side ended the link meanwhile
		_ = c.CloseNow()
		return errClosed
	}
	w.c = c
	close(w.changed)
	w.changed = make(chan struct{})
	return nil
}

// resumeOnce makes one upgrade and asks to resume after the cursor; it
// returns the socket and the server's count of this connection's client
// messages that reached the runtime (nil when it gave none).
func (w *wsConn) resumeOnce() (*websocket.Conn, *int64, error) {
	ctx, cancel := context.WithTimeout(w.ctx, w.l.opts.ConnectTimeout)
	defer cancel()
	c, _, err := w.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Write(ctx, websocket.MessageText, netwire.ResumeRequest(string(w.cursor))); err != nil {
		_ = c.CloseNow()
		return nil, nil, err
	}
	_, first, err := c.Read(ctx)
	if err != nil {
		_ = c.CloseNow()
		return nil, nil, err
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Reason string `json:"reason"`
		} `json:"params"`
		Result *struct {
			Received *int64 `json:"received"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	switch {
	case json.Unmarshal(first, &m) != nil:
		err = &errResumeRefused{"the server's answer is not JSON"}
	case m.Method == netwire.ResumeFailedMethod:
		err = &errResumeRefused{m.Params.Reason}
	case m.Error != nil:
		err = &errResumeRefused{m.Error.Message}
	case string(m.ID) != `"`+netwire.ResumeRequestID+`"`:
		err = &errResumeRefused{"the server did not answer " + netwire.ResumeMethod}
	}
	if err != nil {
		_ = c.CloseNow()
		return nil, nil, err
	}
	var received *int64
	if m.Result != nil {
		received = m.Result.Received
	}
	return c, received, nil
}

// wsStdin is the sending side of a WebSocket: each line one text frame;
// Close starts the close handshake (bounded by the library's own wait).
type wsStdin struct {
	w        *wsConn
	lw       netwire.LineWriter
	deadline atomic.Pointer[time.Time]
	once     sync.Once
	closed   atomic.Bool
}

// Write sends every complete line as one frame.
func (s *wsStdin) Write(b []byte) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	return s.lw.Write(b)
}

// send sends one frame and keeps it until a resume no longer needs it.
// When the socket dropped and the connection is being resumed, it waits
// for the new socket (within the write deadline): the resume sends the
// message again there, with every other the server did not receive.
func (s *wsStdin) send(msg []byte) error {
	s.w.noteInit(msg)
	ctx, cancel := withWriteDeadline(context.Background(), &s.deadline)
	defer cancel()
	s.w.outMu.Lock()
	s.w.keep(msg)
	c, changed, over := s.w.socket()
	err := c.Write(ctx, websocket.MessageText, msg)
	s.w.outMu.Unlock()
	if err == nil || over || !s.w.resumable.Load() || ctx.Err() != nil {
		return err
	}
	_ = c.CloseNow() // broken for writing: the reader notices and resumes
	select {
	case <-changed:
		if _, _, over := s.w.socket(); over {
			return err
		}
		return nil // the resume sent it again
	case <-ctx.Done():
		return err
	}
}

// SetWriteDeadline bounds the next writes; a write past it breaks the
// link (the library closes it).
func (s *wsStdin) SetWriteDeadline(t time.Time) error {
	s.deadline.Store(&t)
	return nil
}

// Close starts the close handshake once, in a goroutine Release awaits.
func (s *wsStdin) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.w.leaving.Store(true)
		c, _, _ := s.w.socket()
		s.w.p.wg.Add(1)
		go func() {
			defer s.w.p.wg.Done()
			err := c.Close(websocket.StatusNormalClosure, "")
			if err != nil && !errors.Is(err, errClosed) {
				_ = c.CloseNow()
			}
		}()
	})
	return nil
}
