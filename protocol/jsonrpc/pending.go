package jsonrpc

import (
	"context"
	"encoding/json"
	"strconv"
)

// Pending is a request that was sent and whose response has not been
// consumed yet. It lets a caller tell "the peer has the request" (Send
// returned) from "the peer answered" (Done is closed).
type Pending struct {
	id     int64
	method string
	done   chan struct{}
	res    callResult
}

// complete records the outcome and wakes waiters. It is called at most once,
// by whoever removed the call from the pending table.
func (p *Pending) complete(res callResult) {
	p.res = res
	close(p.done)
}

// Done is closed once the response arrived, or the connection ended.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Result returns the outcome once Done is closed: the raw result (owned by
// the caller), a *Error for an error response, an error wrapping
// ErrAmbiguousResponse for a response with both a result and an error, or an
// error wrapping ErrClosed when the connection ended first. Before Done is closed it returns
// ErrPending.
func (p *Pending) Result() (json.RawMessage, error) {
	select {
	case <-p.done:
		return p.res.result, p.res.err
	default:
		return nil, ErrPending
	}
}

// Send writes a request with the next integer id and returns once the line
// was handed to the peer, without waiting for the response. The write is
// bounded by ctx whether or not the writer supports write deadlines (when it
// does, as an *os.File pipe does, ctx's deadline is set on it as well).
// Errors are as for Call: a request whose ctx ended before it was handed to
// the writer goroutine returns ctx.Err() and leaves the stream intact; one
// whose ctx ended while it was being written breaks the stream and returns
// an error wrapping ErrWriteFailed and ctx.Err() (see Conn.Notify).
func (c *Conn) Send(ctx context.Context, method string, params any) (*Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, errClosedByClose
	}
	id := c.nextID.Add(1) - 1
	line, err := buildMessage(strconv.AppendInt(nil, id, 10), method, "params", params)
	if err != nil {
		return nil, err
	}
	p := &Pending{id: id, method: method, done: make(chan struct{})}
	c.mu.Lock()
	if c.ended {
		err := c.closedErrLocked()
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = p
	c.mu.Unlock()

	if err := c.write(ctx, line); err != nil {
		c.Forget(p)
		return nil, err
	}
	return p, nil
}

// Forget stops waiting for p: a response that arrives later is dropped.
// Done stays open unless the response had already arrived.
func (c *Conn) Forget(p *Pending) { c.forget(p.id) }
