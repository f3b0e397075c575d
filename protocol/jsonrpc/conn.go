package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Request is an inbound request from the peer.
type Request struct {
	// ID is the peer's id, preserved exactly; pass it to Conn.Reply or
	// Conn.ReplyError.
	ID ID
	// Method is the method name.
	Method string
	// Params is the raw "params" value, nil when absent. It is a copy owned by
	// the handler and stays valid after HandleRequest returns.
	Params json.RawMessage
}

// Handler receives what the peer sends, other than responses to our calls.
//
// Every method is called on the connection's single read goroutine, one call
// at a time and in wire order. Nothing is queued: while a method runs, the
// connection reads no further, which is how a slow consumer pushes back on
// the peer. A method may call Conn.Notify, Conn.Reply and Conn.ReplyError, but
// must not wait for the result of a Conn.Call: that result can only be read
// after the method returns. Start a goroutine for such work instead.
//
// Slices handed to HandleNotification and HandleMalformed alias the
// connection's read buffer and are valid only during the call: a handler that
// keeps them must copy them (json.Unmarshal into a value copies what it
// decodes, including nested json.RawMessage fields).
type Handler interface {
	// HandleNotification receives a notification. params is the raw
	// "params" value (nil when absent), valid only during the call.
	HandleNotification(method string, params json.RawMessage)
	// HandleRequest receives a request. The handler must answer it with
	// Conn.Reply or Conn.ReplyError, either before returning or later from
	// any goroutine. req.Params is the handler's own copy.
	HandleRequest(req Request)
	// HandleMalformed receives a line that is not a JSON-RPC 2.0 message:
	// invalid JSON, not an object, a missing or wrong "jsonrpc" version,
	// neither "method" nor "id", an invalid id, or a response without
	// exactly one of "result" and "error". line is the line without its
	// terminator, valid only during the call; err says what is wrong. The
	// connection goes on.
	HandleMalformed(line []byte, err error)
	// HandleOversize reports that a line longer than Options.MaxLineBytes
	// was discarded; n is its length in bytes, terminator excluded. The
	// connection goes on with the next line.
	HandleOversize(n int64)
}

// Options configures a Conn. The zero value is usable.
type Options struct {
	// MaxLineBytes bounds one inbound line, terminator excluded. Zero or
	// negative means DefaultMaxLineBytes.
	MaxLineBytes int
	// Logger receives debug records about the connection. Nil discards them.
	Logger *slog.Logger
}

// callResult is what the read loop hands to a waiting Call.
type callResult struct {
	result json.RawMessage
	err    error
}

// Conn is a JSON-RPC 2.0 connection over a newline-delimited stream. Its
// methods are safe for concurrent use.
//
// Its life: NewConn starts the read goroutine; Call, Notify, Reply and
// ReplyError write; Close stops writes; the owner ends the read side (for an
// agent, its stdout reaches EOF when the process exits or the pipe is
// closed), which ends the read goroutine, fails pending calls, and closes
// Done; Wait returns once the goroutine has.
type Conn struct {
	w      io.Writer
	h      Handler
	log    *slog.Logger
	lines  *lineReader
	nextID atomic.Int64
	closed atomic.Bool // Close was called

	wmu  sync.Mutex // serializes writes; guards werr
	werr error      // first write error; writes fail from then on

	mu      sync.Mutex // guards pending, ended, err
	pending map[int64]*Pending
	ended   bool
	err     error

	done chan struct{}
	wg   sync.WaitGroup

	// lastMethod is the most recent notification method, reused to avoid
	// allocating the same method name for every line. Read goroutine only.
	lastMethod string
}

// NewConn starts a connection that reads messages from r and writes messages
// to w, and starts its read goroutine, which runs until r reports EOF or an
// error. h receives notifications, requests, and bad lines; it must not be nil.
func NewConn(r io.Reader, w io.Writer, h Handler, opts Options) *Conn {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		w:       w,
		h:       h,
		log:     logger,
		lines:   newLineReader(r, opts.MaxLineBytes, readBufferSize),
		pending: make(map[int64]*Pending),
		done:    make(chan struct{}),
	}
	c.wg.Go(c.readLoop)
	return c
}

// Call sends a request with the next integer id and waits for its response.
// It returns the raw result (a copy owned by the caller), or:
//   - a *Error when the peer answers with an error response;
//   - ctx.Err() when ctx ends first; the call is forgotten and a late
//     response is dropped;
//   - an error wrapping ErrClosed when the connection ends first, or has
//     already ended or been closed (then without sending anything);
//   - an error wrapping ErrWriteFailed when the request cannot be written.
//
// params is encoded with encoding/json (a json.RawMessage is sent as is,
// compacted); nil omits "params".
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, err := c.Send(ctx, method, params)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.done:
		return p.Result()
	case <-ctx.Done():
		c.Forget(p)
		select {
		case <-p.done: // the response won the race: use it
			return p.Result()
		default:
			return nil, ctx.Err()
		}
	}
}

// forget removes a pending call.
func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Notify sends a notification. params is encoded as for Call; nil omits
// "params". Errors wrap ErrClosed after Close and ErrWriteFailed when the
// write fails.
func (c *Conn) Notify(method string, params any) error {
	line, err := buildMessage(nil, method, "params", params)
	if err != nil {
		return err
	}
	return c.write(line)
}

// Reply answers the inbound request id with a result (nil sends null). The id
// is echoed in the form the peer sent it. Errors wrap ErrClosed after Close
// and ErrWriteFailed when the write fails.
func (c *Conn) Reply(id ID, result any) error {
	line, err := buildMessage(id.appendJSON(nil), "", "result", result)
	if err != nil {
		return err
	}
	return c.write(line)
}

// ReplyError answers the inbound request id with an error response. A nil e
// sends an internal error. Errors wrap ErrClosed after Close and
// ErrWriteFailed when the write fails.
func (c *Conn) ReplyError(id ID, e *Error) error {
	if e == nil {
		e = &Error{Code: CodeInternalError, Message: "internal error"}
	}
	line, err := buildMessage(id.appendJSON(nil), "", "error", e)
	if err != nil {
		return err
	}
	return c.write(line)
}

// Done returns a channel closed when the read loop has ended (EOF or a read
// error). Calls still pending at that point have failed with ErrClosed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the read loop ended: io.EOF for a clean end of the stream,
// otherwise the read error. It returns nil before Done is closed.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close stops accepting writes: later Call, Notify, Reply and ReplyError fail
// with an error wrapping ErrClosed. It does not close the reader or the
// writer, and does not stop the read loop: the owner ends the stream (for an
// agent, by closing its stdout or letting it exit) and then calls Wait.
// Close is idempotent and always returns nil.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return nil
}

// Wait blocks until the read goroutine has returned.
func (c *Conn) Wait() { c.wg.Wait() }

var errClosedByClose = fmt.Errorf("%w: Close was called", ErrClosed)

// closedErrLocked is the error for a call that cannot complete because the
// read loop ended. c.mu must be held.
func (c *Conn) closedErrLocked() error {
	return fmt.Errorf("%w: %w", ErrClosed, c.err)
}

// write sends one complete line, serialized with other writes.
func (c *Conn) write(line []byte) error {
	return c.writeBy(line, time.Time{})
}

// writeDeadliner is a writer whose writes can be bounded in time, such as
// an *os.File pipe.
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// writeBy is write bounded by deadline when it is set and the writer
// supports write deadlines. A write that times out fails the stream like
// any other write error (part of the line may have been written).
func (c *Conn) writeBy(line []byte, deadline time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if wd, ok := c.w.(writeDeadliner); ok && !deadline.IsZero() {
		if err := wd.SetWriteDeadline(deadline); err == nil {
			defer func() { _ = wd.SetWriteDeadline(time.Time{}) }()
		}
	}
	if c.closed.Load() {
		return errClosedByClose
	}
	if c.werr != nil {
		return fmt.Errorf("%w: %w", ErrWriteFailed, c.werr)
	}
	n, err := c.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.werr = err
		c.log.Debug("write to peer failed", "error", err)
		return fmt.Errorf("%w: %w", ErrWriteFailed, err)
	}
	return nil
}

// buildMessage encodes one message line: {"jsonrpc":"2.0"[,"id":id]
// [,"method":method][,key:value]}\n. id is the JSON encoding of the id, or nil
// for none. With key "params" (a request or notification) the method is
// written and a nil value omits "params"; with "result" or "error" (a
// response) the method is not written and the value always is.
func buildMessage(id []byte, method, key string, value any) ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, `{"jsonrpc":"2.0"`...)
	if id != nil {
		b = append(b, `,"id":`...)
		b = append(b, id...)
	}
	if key == "params" {
		b = append(b, `,"method":`...)
		b = appendJSONString(b, method)
	}
	if value != nil || key != "params" {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		var err error
		if b, err = appendValue(b, value); err != nil {
			return nil, fmt.Errorf("jsonrpc: encode %s: %w", key, err)
		}
	}
	return append(b, '}', '\n'), nil
}

// readLoop is the connection's read goroutine.
func (c *Conn) readLoop() {
	var err error
	for {
		var line []byte
		var oversize int64
		line, oversize, err = c.lines.next()
		if err != nil {
			break
		}
		if oversize > 0 {
			c.log.Debug("discarded a line over the bound", "bytes", oversize, "max_line_bytes", c.lines.max)
			c.h.HandleOversize(oversize)
			continue
		}
		c.dispatch(line)
	}
	c.finish(err)
}

// finish records why the loop ended, fails pending calls, and closes done.
func (c *Conn) finish(err error) {
	c.mu.Lock()
	c.ended = true
	c.err = err
	pending := c.pending
	c.pending = nil
	closedErr := c.closedErrLocked()
	c.mu.Unlock()
	for _, p := range pending {
		p.complete(callResult{err: closedErr})
	}
	if errors.Is(err, io.EOF) {
		c.log.Debug("connection ended", "reason", err.Error(), "failed_calls", len(pending))
	} else {
		c.log.Debug("connection read failed", "error", err, "failed_calls", len(pending))
	}
	close(c.done)
}

// dispatch classifies one line and hands it on.
func (c *Conn) dispatch(line []byte) {
	if len(trimSpace(line)) == 0 {
		return // blank lines are ignored
	}
	var env envelope
	k, err := env.decode(line)
	if err != nil {
		c.malformed(line, err)
		return
	}
	switch k {
	case kindNotification:
		c.h.HandleNotification(c.methodName(env.method), env.params)
	case kindRequest:
		id, _ := parseID(env.id)              // validated by classify
		method, _ := decodeString(env.method) // likewise
		var params json.RawMessage
		if env.params != nil {
			params = append(json.RawMessage(nil), env.params...)
		}
		c.h.HandleRequest(Request{ID: id, Method: method, Params: params})
	case kindResponse:
		if env.err == nil {
			c.deliver(env.id, callResult{result: append(json.RawMessage(nil), env.result...)})
			return
		}
		rpcErr, err := decodeError(env.err)
		if err != nil {
			c.malformed(line, err)
			return
		}
		c.deliver(env.id, callResult{err: rpcErr})
	}
}

// malformed reports a line that is not a JSON-RPC message.
func (c *Conn) malformed(line []byte, reason error) {
	c.log.Debug("received a line that is not JSON-RPC", "error", reason, "bytes", len(line))
	c.h.HandleMalformed(line, &malformedError{reason: reason})
}

// deliver hands a response to the Call waiting for id, or drops it.
func (c *Conn) deliver(rawID []byte, res callResult) {
	if n, ok := parseInt64(rawID); ok {
		c.mu.Lock()
		p, found := c.pending[n]
		delete(c.pending, n)
		c.mu.Unlock()
		if found {
			p.complete(res) // only one completion per call
			return
		}
	}
	if res.err != nil {
		c.log.Debug("dropped error response for unknown id", "id", string(rawID), "error", res.err)
		return
	}
	c.log.Debug("dropped response for unknown id", "id", string(rawID))
}

// methodName returns the method as a string, reusing the previous one when
// the bytes are the same.
func (c *Conn) methodName(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if string(inner) == c.lastMethod {
		return c.lastMethod
	}
	if !plainString(inner) {
		s, _ := decodeString(raw)
		return s
	}
	c.lastMethod = string(inner)
	return c.lastMethod
}
