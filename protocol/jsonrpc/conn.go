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
// the peer. A method may call Conn.Notify, Conn.Reply and Conn.ReplyError
// (with a context that bounds the write: a peer that stops reading would
// otherwise stall the read goroutine too), but must not wait for the result
// of a Conn.Call: that result can only be read after the method returns.
// Start a goroutine for such work instead.
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
	// neither "method" nor "id", an invalid id, a response with neither
	// "result" nor "error", or an "error" that is not an error object. A
	// response with both a non-null "result" and a non-null "error" comes
	// here only when no Call waits for its id; a waiting Call fails with
	// ErrAmbiguousResponse instead. line is the line without its
	// terminator, valid only during the call; err says what is wrong. The
	// connection goes on.
	HandleMalformed(line []byte, err error)
	// HandleOversize reports a line longer than Options.MaxLineBytes. It is
	// called as soon as the bound is certainly passed, without waiting for
	// the line's newline (which may never come); the rest of the line is
	// then discarded as it arrives, without being stored, and reading goes
	// on after its newline. n is the number of bytes of the line seen when
	// it was reported, terminator excluded: always more than the bound, and
	// the full length only when the newline had already arrived.
	HandleOversize(n int64)
}

// IdleHandler is an optional interface of a Handler. HandleIdle is called
// on the read goroutine when the connection has handled every complete
// line it has read, the peer had nothing more when it last looked (its
// last read did not fill the buffer), and it is about to read again: a
// read that blocks while the peer sends nothing. It is also called before
// such a read in the middle of a line that has not ended. It is the moment
// to write out output buffered while handling a batch of lines.
type IdleHandler interface {
	HandleIdle()
}

// ResultHandler is an optional interface of a Handler. HandleResult is
// called on the read goroutine with each successful response to a call
// of this connection (Call or Send), before the caller is woken and
// before the next line is read: what it records is in place for every
// later message of the peer. method is the call's method; result is the
// raw result the caller will get, which HandleResult must neither modify
// nor keep. A response that no call waits for, or an error response, is
// not reported.
type ResultHandler interface {
	HandleResult(method string, result json.RawMessage)
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
// A Conn owns two goroutines: the read goroutine, which reads and dispatches
// lines, and the writer goroutine, which makes every call to the writer's
// Write. Call, Send, Notify, Reply and ReplyError hand a complete line to the
// writer goroutine and return by their context's end at the latest, whether
// or not the writer supports write deadlines; a write still blocked in Write
// at that point leaves the stream broken (see Broken).
//
// The owner's contract, in order:
//  1. Close: no new write starts.
//  2. Close the writer (for an agent, its stdin). This unblocks a Write the
//     writer goroutine may still be stuck in (an *os.File and an
//     io.PipeWriter both make a pending Write return when closed).
//  3. End the read side (for an agent, its stdout reaches EOF when the
//     process exits or the pipe is closed). This ends the read goroutine,
//     fails pending calls, and closes Done.
//  4. Wait, which returns once both goroutines have.
//
// The writer goroutine also stops by itself once the read side has ended or
// the stream broke, as soon as no Write is in progress, so Wait never hangs
// once the writer is closed and the read side has ended.
type Conn struct {
	w      io.Writer
	h      Handler
	rh     ResultHandler // h as a ResultHandler, or nil
	log    *slog.Logger
	lines  *lineReader
	nextID atomic.Int64
	closed atomic.Bool // Close was called

	wq       chan *writeReq // lines for the writer goroutine (unbuffered)
	stop     chan struct{}  // closed by Close
	stopOnce sync.Once
	wdone    chan struct{} // closed when the writer goroutine has returned

	wmu    sync.Mutex    // guards werr
	werr   error         // first write failure, wrapping ErrWriteFailed
	broken chan struct{} // closed when werr is set

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
// to w: it starts the read goroutine, which runs until r reports EOF or an
// error, and the writer goroutine (see Conn for how both end). h receives
// notifications, requests, and bad lines; it must not be nil. When h is
// also an IdleHandler, HandleIdle is called before each read from r that
// follows one that drained it; when h is also a ResultHandler, it sees
// each successful response before its caller does.
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
		wq:      make(chan *writeReq),
		stop:    make(chan struct{}),
		wdone:   make(chan struct{}),
		broken:  make(chan struct{}),
		pending: make(map[int64]*Pending),
		done:    make(chan struct{}),
	}
	if ih, ok := h.(IdleHandler); ok {
		c.lines.idle = ih.HandleIdle
	}
	c.rh, _ = h.(ResultHandler)
	c.wg.Go(c.readLoop)
	c.wg.Go(c.writeLoop)
	return c
}

// Call sends a request with the next integer id and waits for its response.
// It returns the raw result (a copy owned by the caller), or:
//   - a *Error when the peer answers with an error response;
//   - an error wrapping ErrAmbiguousResponse when the response carries both
//     a result and an error;
//   - ctx.Err() when ctx ends first (also while the request is waiting to
//     be written, which leaves the stream intact); the call is forgotten
//     and a late response is dropped;
//   - an error wrapping ErrClosed when the connection ends first, or has
//     already ended or been closed (then without sending anything);
//   - an error wrapping ErrWriteFailed when the request cannot be written,
//     including when ctx ends while it is being written (see Notify).
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

// Notify sends a notification and returns once it was written, or by ctx's
// end at the latest. params is encoded as for Call; nil omits "params".
//
// Errors:
//   - ctx.Err() when ctx has ended before the line was handed to the writer
//     goroutine (also while it waited behind other writes): nothing was
//     written and the stream stays usable;
//   - an error wrapping ErrWriteFailed and ctx.Err() when ctx ended while
//     the line was being written: part of it may have reached the peer, so
//     the stream is broken (see Broken); a deadline enforced by the writer
//     itself also wraps os.ErrDeadlineExceeded;
//   - an error wrapping ErrWriteFailed and the writer's error when the
//     write failed, and the same error for every write after a failure;
//   - an error wrapping ErrClosed after Close or after the read side ended.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	line, err := buildMessage(nil, method, "params", params)
	if err != nil {
		return err
	}
	return c.write(ctx, line)
}

// Reply answers the inbound request id with a result (nil sends null). The id
// is echoed in the form the peer sent it. The write is bounded by ctx, with
// the errors of Notify.
func (c *Conn) Reply(ctx context.Context, id ID, result any) error {
	line, err := buildMessage(id.appendJSON(nil), "", "result", result)
	if err != nil {
		return err
	}
	return c.write(ctx, line)
}

// ReplyError answers the inbound request id with an error response. A nil e
// sends an internal error. The write is bounded by ctx, with the errors of
// Notify.
func (c *Conn) ReplyError(ctx context.Context, id ID, e *Error) error {
	if e == nil {
		e = &Error{Code: CodeInternalError, Message: "internal error"}
	}
	line, err := buildMessage(id.appendJSON(nil), "", "error", e)
	if err != nil {
		return err
	}
	return c.write(ctx, line)
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
// with an error wrapping ErrClosed, and so do writes still waiting for their
// turn. It lets the writer goroutine stop, but does not interrupt a Write in
// progress, does not close the reader or the writer, and does not stop the
// read loop: the owner closes the writer, ends the read side, and then calls
// Wait (see Conn). Close is idempotent and always returns nil.
func (c *Conn) Close() error {
	c.closed.Store(true)
	c.stopOnce.Do(func() { close(c.stop) })
	return nil
}

// Wait blocks until the read goroutine and the writer goroutine have
// returned. It does not hang once the owner has closed the writer and ended
// the read side (see Conn).
func (c *Conn) Wait() { c.wg.Wait() }

var errClosedByClose = fmt.Errorf("%w: Close was called", ErrClosed)

// closedErrLocked is the error for a call that cannot complete because the
// read loop ended. c.mu must be held.
func (c *Conn) closedErrLocked() error {
	return fmt.Errorf("%w: %w", ErrClosed, c.err)
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
	case kindAmbiguousResponse:
		p := c.takePending(env.id)
		if p == nil {
			c.malformed(line, errResultAndError)
			return
		}
		c.log.Debug("response carried both result and error", "id", string(env.id))
		p.complete(callResult{err: fmt.Errorf("%w (id %s)", ErrAmbiguousResponse, env.id)})
	}
}

// malformed reports a line that is not a JSON-RPC message.
func (c *Conn) malformed(line []byte, reason error) {
	c.log.Debug("received a line that is not JSON-RPC", "error", reason, "bytes", len(line))
	c.h.HandleMalformed(line, &malformedError{reason: reason})
}

// takePending removes and returns the call waiting for the raw id, or nil.
// Only the id exactly as it was sent answers a call: our ids are written as
// non-negative integers without a sign, so -0, 0.0 or 0e0 answer no call
// (JSON-RPC 2.0: a response's id is the same as the request's).
func (c *Conn) takePending(rawID []byte) *Pending {
	if rawID[0] == '-' {
		return nil
	}
	n, ok := parseInt64(rawID)
	if !ok {
		return nil
	}
	c.mu.Lock()
	p := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	return p
}

// deliver hands a response to the Call waiting for id, or drops it.
func (c *Conn) deliver(rawID []byte, res callResult) {
	if p := c.takePending(rawID); p != nil {
		if c.rh != nil && res.err == nil {
			c.rh.HandleResult(p.method, res.result)
		}
		p.complete(res) // only one completion per call
		return
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
