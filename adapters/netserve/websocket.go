package netserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// drainBound bounds how long an attached WebSocket may take to receive
// what the runtime wrote once its connection is ending.
const drainBound = 2 * time.Second

// wsConn is one WebSocket connection (docs/behaviour.md#network): it
// outlives the socket it came on. Every message of the runtime carries
// its cursor and is journaled; a client whose socket dropped dials again
// naming the connection (Acp-Connection-Id) and sends stream/resume with
// the last cursor it received, and the messages after it are sent again,
// then the live ones; the answer to stream/resume counts the client's
// messages that reached the runtime, so the client sends the rest again.
// A connection no socket is attached to for
// AbandonAfter ends, and its runtime with it; the client's close
// handshake ends it at once.
type wsConn struct {
	id      string
	j       *journal
	resume  netwire.Retention
	abandon time.Duration
	inbox   chan []byte
	done    chan struct{} // the connection ended
	eof     chan struct{} // the client closed the socket normally
	once    sync.Once
	eofOnce sync.Once
	// received counts the client's messages handed to the runtime, over
	// every socket of the connection (the stream/resume answer's figure).
	received atomic.Int64

	mu      sync.Mutex
	initID  []byte // the id of the initialize awaiting its answer
	closed  bool
	cur     *websocket.Conn    // the attached socket, nil while none
	detach  context.CancelFunc // ends the attached socket's sending
	reading chan struct{}      // closed when the attached socket's reader ended
	idle    *time.Timer        // runs close once abandoned
	drained *time.Timer        // runs detach once the drain bound passed
}

func newWSConn(o Options) (*wsConn, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	w := &wsConn{id: id, j: newJournal(o), resume: o.retained(), abandon: o.AbandonAfter,
		inbox: make(chan []byte), done: make(chan struct{}), eof: make(chan struct{})}
	w.idle = time.AfterFunc(o.AbandonAfter, w.close)
	w.idle.Stop() // started when no socket is attached
	return w, nil
}

func (w *wsConn) authenticate(*Server) ([]byte, bool) { return nil, true }

func (w *wsConn) read() ([]byte, error) {
	select {
	case m := <-w.inbox:
		return m, nil
	case <-w.eof:
		return nil, io.EOF
	case <-w.done:
		return nil, errLinkClosed
	}
}

// write journals msg; the initialize answer first advertises the resume.
func (w *wsConn) write(msg []byte) error {
	w.mu.Lock()
	if w.initID != nil && netwire.Answers(msg, w.initID) {
		w.initID = nil
		msg = netwire.AddResumable(msg, w.resume)
	}
	w.mu.Unlock()
	return w.j.add(msg)
}

func (w *wsConn) flush() error { w.j.publish(); return nil }

func (w *wsConn) closeWrite() { w.j.end() }

// close ends the connection: the attached socket gets what is journaled
// (bounded by drainBound), then its close.
func (w *wsConn) close() {
	w.once.Do(func() {
		close(w.done)
		w.mu.Lock()
		w.closed = true
		w.idle.Stop()
		if w.detach != nil {
			w.drained = time.AfterFunc(drainBound, w.detach)
		}
		w.mu.Unlock()
		w.j.close()
	})
}

// noteInit remembers the id of the client's initialize request.
func (w *wsConn) noteInit(msg []byte) {
	if id := netwire.InitializeID(msg); id != nil {
		w.mu.Lock()
		w.initID = id
		w.mu.Unlock()
	}
}

// attach serves the socket c from the message of sequence from until it
// drops or the connection ends.
func (w *wsConn) attach(c *websocket.Conn, bc *batchConn, from int64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		_ = c.CloseNow()
		return
	}
	if w.cur != nil { // a socket that has not noticed its drop yet
		_ = w.cur.CloseNow()
		w.detach()
	}
	reading := make(chan struct{})
	w.cur, w.detach, w.reading = c, cancel, reading
	w.idle.Stop()
	w.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // client → runtime
		defer wg.Done()
		defer close(reading)
		defer cancel()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
					w.eofOnce.Do(func() { close(w.eof) })
				}
				return
			}
			w.noteInit(msg)
			select {
			case w.inbox <- msg:
				w.received.Add(1)
			case <-w.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	// A socket that stalls is ended by CloseNow (detach, or the reader's
	// end): the writes themselves take no context, which would cost a
	// registration per frame.
	stopWrites := context.AfterFunc(ctx, func() { _ = c.CloseNow() })
	defer stopWrites()
	all := w.j.follow(ctx, from, func(_ int64, msg []byte) error {
		if bc != nil {
			bc.batch()
		}
		return c.Write(context.Background(), websocket.MessageText, msg)
	}, func() error {
		if bc != nil {
			return bc.release()
		}
		return nil
	})
	if all {
		stopWrites()
		_ = c.Close(websocket.StatusNormalClosure, "the runtime ended")
	}
	_ = c.CloseNow()
	cancel()
	wg.Wait()
	w.mu.Lock()
	if w.cur == c {
		w.cur, w.detach, w.reading = nil, nil, nil
		if w.drained != nil {
			w.drained.Stop()
		}
		if !w.closed {
			w.idle.Reset(w.abandon)
		}
	}
	w.mu.Unlock()
}

// takeOver ends the socket attached to w, if any, and waits for its
// reader, so that no message of the client is counted after the count
// is read. It returns how many of the client's messages reached the
// runtime.
func (w *wsConn) takeOver() int64 {
	w.mu.Lock()
	reading := w.reading
	if w.cur != nil {
		_ = w.cur.CloseNow()
		w.detach()
	}
	w.mu.Unlock()
	if reading != nil {
		<-reading // the reader ends at once: its context is cancelled
	}
	return w.received.Load()
}

// handleWebSocket answers an upgrade: a new connection (its id in the
// Acp-Connection-Id header of the answer), or, naming one, a resume
// whose first frame is stream/resume.
func (s *Server) handleWebSocket(ctx context.Context, rw http.ResponseWriter, r *http.Request) {
	if !s.track() {
		http.Error(rw, "the server is ending", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	bw := &batching{ResponseWriter: rw}
	if id := r.Header.Get(netwire.HeaderConnection); id != "" {
		c, err := websocket.Accept(bw, r, nil)
		if err != nil {
			return // Accept answered the request
		}
		c.SetReadLimit(netwire.MaxMessageBytes)
		s.mu.Lock()
		w := s.socks[id]
		s.mu.Unlock()
		s.resumeSocket(c, bw.conn, w)
		return
	}
	w, err := newWSConn(s.opts)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set(netwire.HeaderConnection, w.id)
	c, err := websocket.Accept(bw, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(netwire.MaxMessageBytes)
	sv, ok := s.join(w)
	if !ok {
		_ = c.CloseNow()
		return
	}
	s.mu.Lock()
	s.socks[w.id] = w
	s.mu.Unlock()
	if s.opts.OnConnection != nil {
		s.opts.OnConnection(w.id)
	}
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.socks, w.id)
			s.mu.Unlock()
			s.leave(sv)
			if s.opts.OnConnectionEnd != nil {
				s.opts.OnConnectionEnd(w.id)
			}
		}()
		sv.run(ctx)
	}()
	w.attach(c, bw.conn, 0)
}

// resumeSocket reads the stream/resume request that must come first on
// c and attaches c to w after its cursor; when w is gone (nil), the
// request is not stream/resume, or the cursor is no longer held, it
// sends stream/resume_failed and closes c.
func (s *Server) resumeSocket(c *websocket.Conn, bc *batchConn, w *wsConn) {
	ctx, cancel := context.WithTimeout(context.Background(), authBound)
	_, first, err := c.Read(ctx)
	cancel()
	if err != nil {
		_ = c.CloseNow()
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	reason := ""
	var from int64
	switch {
	case json.Unmarshal(first, &req) != nil || req.Method != netwire.ResumeMethod:
		reason = "the first message of a resumed connection must be " + netwire.ResumeMethod
	case w == nil:
		reason = "the connection is no longer held"
	default:
		cursor := req.Params.Cursor
		if cursor == "" {
			cursor = "-1" // nothing received yet: from the first message
		}
		var ok bool
		if from, ok = w.j.after(cursor); !ok {
			reason = "the messages after cursor " + req.Params.Cursor + " are no longer held"
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), drainBound)
	defer cancel()
	if reason != "" {
		s.opts.Logger.Info("refused a resume", "reason", reason)
		_ = c.Write(ctx, websocket.MessageText, netwire.ResumeFailed(reason))
		_ = c.Close(websocket.StatusNormalClosure, "resume failed")
		return
	}
	received := w.takeOver()
	if c.Write(ctx, websocket.MessageText, netwire.ResumeAnswer(req.ID, received)) != nil {
		_ = c.CloseNow()
		return
	}
	s.opts.Logger.Info("resumed a connection", "from", from, "received", received)
	w.attach(c, bc, from)
}
