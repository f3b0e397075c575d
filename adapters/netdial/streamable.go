package netdial

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
)

// Bounds of the Streamable HTTP client.
const (
	// reopenTries is how many times a dropped event stream is reopened in
	// a row before the connection counts as broken.
	reopenTries = 3
	// reopenPause is the pause before the first reopen, doubled after
	// each.
	reopenPause = 100 * time.Millisecond
	// queueBound is how many received messages wait for the reader before
	// the event stream's reading waits.
	queueBound = 1024
)

// errHTTPEnded is the reading side's end once the connection is over.
var errHTTPEnded = io.EOF

// msgQueue is the received messages in order, bounded, with an end.
type msgQueue struct {
	mu   sync.Mutex
	cond *sync.Cond
	msgs [][]byte
	err  error
}

func newQueue() *msgQueue {
	q := &msgQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push adds msg, waiting while the queue is full; false once it ended.
func (q *msgQueue) push(msg []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.msgs) >= queueBound && q.err == nil {
		q.cond.Wait()
	}
	if q.err != nil {
		return false
	}
	q.msgs = append(q.msgs, msg)
	q.cond.Broadcast()
	return true
}

// end ends the queue once its messages are read.
func (q *msgQueue) end(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.cond.Broadcast()
	q.mu.Unlock()
}

// next returns the next message, or the end once none is left.
func (q *msgQueue) next() ([]byte, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.msgs) == 0 && q.err == nil {
		q.cond.Wait()
	}
	if len(q.msgs) == 0 {
		return nil, q.err
	}
	m := q.msgs[0]
	q.msgs[0] = nil
	q.msgs = q.msgs[1:]
	q.cond.Broadcast()
	return m, nil
}

// httpConn is one Streamable HTTP connection (docs/behaviour.md#network):
// each message is POSTed; the initialize answer carries the connection
// id every later request names; the server's messages come on the answer
// of a POST (JSON or an event stream) or on the connection's event stream
// (GET), reopened with Last-Event-ID when it drops; closing standard
// input DELETEs the connection.
type httpConn struct {
	l      *Launcher
	p      *process
	client *http.Client
	url    string
	token  string
	ctx    context.Context
	cancel context.CancelFunc
	q      *msgQueue

	mu        sync.Mutex
	connID    string
	streaming bool
	conn      *eventStream            // the connection's stream
	sessions  map[string]*eventStream // a stream per session, once named
	newIDs    map[string]bool         // ids of session/new requests awaiting their answer

	// keys names this side's messages (HeaderIdempotencyKey): a random
	// prefix and a count, so a POST sent again after its keep-alive
	// connection died is handed on once.
	keyPrefix string
	sent      atomic.Int64

	deadline atomic.Pointer[time.Time]
	deleting atomic.Bool
	lw       netwire.LineWriter
	once     sync.Once
}

// dialHTTP makes the connection's client; nothing is sent before the
// first message (initialize).
func dialHTTP(l *Launcher, token string) *httpConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &httpConn{l: l, url: l.addr.URL, token: token, ctx: ctx, cancel: cancel, q: newQueue(),
		conn: &eventStream{}, sessions: map[string]*eventStream{}, newIDs: map[string]bool{},
		client: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: l.tls,
			ResponseHeaderTimeout: 0, IdleConnTimeout: 90 * time.Second}}}
	var key [8]byte
	_, _ = rand.Read(key[:]) // never fails (crypto/rand)
	c.keyPrefix = hex.EncodeToString(key[:])
	p := newProcess(l.addr.URL)
	c.p = p
	p.closeNow = func() error {
		c.cancel()
		c.finish(nil, false)
		return nil
	}
	c.lw.Send = c.send
	p.stdin = c
	p.stdout = &netwire.FrameReader{Next: c.q.next}
	return c
}

// Write POSTs every complete line as one message.
func (c *httpConn) Write(b []byte) (int, error) {
	if c.deleting.Load() {
		return 0, errClosed
	}
	return c.lw.Write(b)
}

// SetWriteDeadline bounds the next POSTs' wait for their answer's
// headers.
func (c *httpConn) SetWriteDeadline(t time.Time) error {
	c.deadline.Store(&t)
	return nil
}

// Close DELETEs the connection (bounded, in a goroutine Release awaits):
// the server ends the runtime, and the event stream's end is then the
// process's end.
func (c *httpConn) Close() error {
	c.once.Do(func() {
		c.deleting.Store(true)
		c.mu.Lock()
		id, streaming := c.connID, c.streaming
		c.mu.Unlock()
		if id == "" || !streaming {
			c.finish(nil, true)
			return
		}
		c.p.wg.Add(1)
		go func() {
			defer c.p.wg.Done()
			ctx, cancel := context.WithTimeout(c.ctx, closeBound)
			defer cancel()
			req, err := c.request(ctx, http.MethodDelete, nil)
			if err == nil {
				var resp *http.Response
				if resp, err = c.client.Do(req); err == nil {
					_ = resp.Body.Close()
				}
			}
			if err != nil {
				c.finish(err, false)
			}
		}()
	})
	return nil
}

// finish ends the process: the exit status, then the reading side's end
// once what was received is read.
func (c *httpConn) finish(err error, normal bool) {
	c.p.ended(err, normal)
	c.q.end(errHTTPEnded)
}

// request is a request to the connection's URL with its headers.
func (c *httpConn) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	c.mu.Lock()
	if c.connID != "" {
		req.Header.Set(netwire.HeaderConnection, c.connID)
	}
	c.mu.Unlock()
	return req, nil
}

// send POSTs one message and takes in what its answer carries.
func (c *httpConn) send(msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	_ = json.Unmarshal(msg, &m)
	ctx, cancel := withWriteDeadline(c.ctx, &c.deadline)
	defer cancel()
	req, err := c.request(ctx, http.MethodPost, msg)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	// With the key the request is replayable: the HTTP client sends it
	// again, once, when the reused keep-alive connection it went on turns
	// out dead (a cut link); the server hands it on once.
	req.Header.Set(netwire.HeaderIdempotencyKey, c.keyPrefix+"-"+strconv.FormatInt(c.sent.Add(1), 10))
	if m.Params.SessionID != "" {
		req.Header.Set(netwire.HeaderSession, m.Params.SessionID)
		c.openSession(m.Params.SessionID) // a continued session's events come on its stream
	}
	if m.Method == "session/new" && len(m.ID) > 0 {
		c.mu.Lock()
		c.newIDs[string(m.ID)] = true
		c.mu.Unlock()
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	initializing := m.Method == "initialize"
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		_ = resp.Body.Close()
		if initializing && len(m.ID) > 0 {
			// The refusal answers initialize, so the start ends with the
			// variable named (docs/behaviour.md#network).
			c.q.push(refusal(m.ID, c.l.tokenRefused(resp.Status)))
			return nil
		}
		return fmt.Errorf("the server answered %s", resp.Status)
	case resp.StatusCode == http.StatusAccepted:
		_ = resp.Body.Close()
		return nil
	case resp.StatusCode/100 != 2:
		_ = resp.Body.Close()
		err := fmt.Errorf("the server answered %s", resp.Status)
		if resp.StatusCode == http.StatusNotFound {
			c.finish(errors.New("the server no longer knows the connection"), false)
		}
		return err
	}
	if initializing {
		c.mu.Lock()
		c.connID = resp.Header.Get(netwire.HeaderConnection)
		c.mu.Unlock()
	}
	if isEventStream(resp) {
		c.p.wg.Add(1)
		go func() {
			defer c.p.wg.Done()
			defer resp.Body.Close()
			_ = c.readEvents(resp.Body, nil)
		}()
	} else {
		body, err := io.ReadAll(io.LimitReader(resp.Body, netwire.MaxMessageBytes+1))
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(body)) > 0 {
			c.deliver(body)
		}
	}
	if initializing {
		c.openStream()
	}
	return nil
}

// deliver queues a received message; the answer to a session/new first
// opens the new session's event stream, where its events come.
func (c *httpConn) deliver(msg []byte) bool {
	c.mu.Lock()
	pending := len(c.newIDs) > 0
	c.mu.Unlock()
	if pending && bytes.Contains(msg, []byte(`"result"`)) {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &a) == nil {
			c.mu.Lock()
			ours := c.newIDs[string(a.ID)]
			delete(c.newIDs, string(a.ID))
			c.mu.Unlock()
			if ours && a.Result.SessionID != "" {
				c.openSession(a.Result.SessionID)
			}
		}
	}
	return c.q.push(msg)
}

// openSession opens a session's event stream once.
func (c *httpConn) openSession(id string) {
	c.mu.Lock()
	if _, ok := c.sessions[id]; ok || c.connID == "" {
		c.mu.Unlock()
		return
	}
	es := &eventStream{session: id}
	c.sessions[id] = es
	c.mu.Unlock()
	c.p.wg.Add(1)
	go func() {
		defer c.p.wg.Done()
		c.streamLoop(es)
	}()
}

// refusal is a JSON-RPC error answer to id carrying err's message.
func refusal(id json.RawMessage, err error) []byte {
	msg := err.Error()
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		msg = ae.Message
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{netwire.CodeUnauthorized, msg}})
	return b
}

func isEventStream(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// openStream starts the connection's event stream once.
func (c *httpConn) openStream() {
	c.mu.Lock()
	if c.streaming || c.connID == "" {
		c.mu.Unlock()
		return
	}
	c.streaming = true
	c.mu.Unlock()
	c.p.wg.Add(1)
	go func() {
		defer c.p.wg.Done()
		c.streamLoop(c.conn)
	}()
}

// eventStream is one event stream: the connection's (session "") or a
// session's, with its resume cursor.
type eventStream struct {
	session   string
	lastEvent string // guarded by httpConn.mu
}

// streamLoop keeps an event stream open: a stream that drops is reopened
// with Last-Event-ID (up to reopenTries in a row); a 409 (what was missed
// is gone), a 404 (the connection is gone) or the tries running out ends
// the process; after DELETE the connection stream's end is the process's
// end. A session's stream that the server ends (404) just ends.
func (c *httpConn) streamLoop(es *eventStream) {
	pause := reopenPause
	for tries := 0; ; {
		err := c.streamOnce(es)
		if c.ctx.Err() != nil {
			return
		}
		if c.deleting.Load() {
			if es.session == "" {
				c.finish(nil, true)
			}
			return
		}
		var gone *goneError
		if errors.As(err, &gone) {
			if es.session == "" || !gone.normal {
				c.finish(err, gone.normal)
			}
			return
		}
		if err == nil {
			tries = 0 // the stream had delivered: a fresh run of tries
			pause = reopenPause
		}
		tries++
		if tries > reopenTries {
			c.finish(fmt.Errorf("the event stream could not be reopened: %w", err), false)
			return
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return
		}
		pause *= 2
	}
}

// goneError ends the stream for good.
type goneError struct {
	msg    string
	normal bool
}

func (e *goneError) Error() string { return e.msg }

// streamOnce opens the event stream and reads it to its end; nil when it
// delivered something before it ended.
func (c *httpConn) streamOnce(es *eventStream) error {
	req, err := c.request(c.ctx, http.MethodGet, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if es.session != "" {
		req.Header.Set(netwire.HeaderSession, es.session)
	}
	c.mu.Lock()
	if es.lastEvent != "" {
		req.Header.Set(netwire.HeaderLastEventID, es.lastEvent)
	}
	c.mu.Unlock()
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusConflict:
		return &goneError{msg: "the server no longer holds the messages this client missed (409)"}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return &goneError{msg: "the server ended the connection", normal: true}
	case resp.StatusCode != http.StatusOK || !isEventStream(resp):
		return fmt.Errorf("the event stream was answered %s", resp.Status)
	}
	return c.readEvents(resp.Body, es)
}

// readEvents queues every event of body; an event of a stream (es not
// nil) moves its resume cursor. It returns nil when at least one event
// came.
func (c *httpConn) readEvents(body io.Reader, es *eventStream) error {
	br := bufio.NewReaderSize(body, 64<<10)
	got := false
	for {
		ev, err := netwire.ReadEvent(br)
		if err != nil {
			if got {
				return nil
			}
			return fmt.Errorf("the event stream ended: %w", err)
		}
		got = true
		msg, _ := netwire.StripCursor(ev.Data) // the SSE id: is the cursor
		if !c.deliver(msg) {
			return nil
		}
		if es != nil && ev.ID != "" {
			c.mu.Lock()
			es.lastEvent = ev.ID
			c.mu.Unlock()
		}
	}
}
