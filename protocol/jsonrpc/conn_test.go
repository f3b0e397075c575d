package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestInboundRequestReplyPreservesID(t *testing.T) {
	tests := []struct {
		name   string
		sent   string // id as the peer sends it
		echoed string // id as the reply must carry it
		check  func(t *testing.T, id ID)
	}{
		{name: "zero", sent: `0`, echoed: `0`, check: wantInt(0)},
		{name: "negative", sent: `-1`, echoed: `-1`, check: wantInt(-1)},
		{name: "max int64", sent: `9223372036854775807`, echoed: `9223372036854775807`, check: wantInt(1<<63 - 1)},
		{name: "min int64", sent: `-9223372036854775808`, echoed: `-9223372036854775808`, check: wantInt(-1 << 63)},
		{name: "beyond int64", sent: `18446744073709551616`, echoed: `18446744073709551616`, check: wantNoInt},
		{name: "huge", sent: `123456789012345678901234567890`, echoed: `123456789012345678901234567890`, check: wantNoInt},
		{name: "string zero", sent: `"0"`, echoed: `"0"`, check: wantString("0")},
		{name: "empty string", sent: `""`, echoed: `""`, check: wantString("")},
		{name: "string", sent: `"req-7f3a"`, echoed: `"req-7f3a"`, check: wantString("req-7f3a")},
		{name: "escaped string", sent: `"a\"b\u00e9\n"`, echoed: `"a\"bé\n"`, check: wantString("a\"bé\n")},
		{name: "escaped html", sent: `"<&>"`, echoed: `"<&>"`, check: wantString("<&>")},
		{name: "null", sent: `null`, echoed: `null`, check: func(t *testing.T, id ID) {
			if !id.IsNull() {
				t.Errorf("IsNull() = false for %s", id)
			}
		}},
		// JSON-RPC 2.0 allows any number as an id (fractions are only
		// discouraged): each is answered with its literal, byte for byte.
		{name: "fraction", sent: `2.5`, echoed: `2.5`, check: wantNumber(`2.5`)},
		{name: "fraction with trailing zero", sent: `2.50`, echoed: `2.50`, check: wantNumber(`2.50`)},
		{name: "integral fraction", sent: `1.0`, echoed: `1.0`, check: wantNumber(`1.0`)},
		{name: "exponent", sent: `1e3`, echoed: `1e3`, check: wantNumber(`1e3`)},
		{name: "signed exponent beyond float64", sent: `1E+400`, echoed: `1E+400`, check: wantNumber(`1E+400`)},
		{name: "negative fraction and exponent", sent: `-0.5e-3`, echoed: `-0.5e-3`, check: wantNumber(`-0.5e-3`)},
		{name: "negative zero", sent: `-0`, echoed: `-0`, check: func(t *testing.T, id ID) {
			if id == IntID(0) {
				t.Errorf("id -0 == IntID(0): the literal was not kept")
			}
		}},
		{name: "whitespace around a fraction", sent: " \t2.5 ", echoed: `2.5`, check: wantNumber(`2.5`)},
	}
	answers := []struct {
		name   string
		answer func(c *Conn, id ID) error
		member string // what follows the id in the answer
	}{
		{name: "Reply", answer: func(c *Conn, id ID) error {
			return c.Reply(context.Background(), id, map[string]string{"echo": "fs/read_text_file"})
		}, member: `"result":{"echo":"fs/read_text_file"}`},
		{name: "ReplyError", answer: func(c *Conn, id ID) error {
			return c.ReplyError(context.Background(), id, &Error{Code: CodeMethodNotFound, Message: "Method not found"})
		}, member: `"error":{"code":-32601,"message":"Method not found"}`},
	}
	for _, tt := range tests {
		for _, a := range answers {
			t.Run(tt.name+"/"+a.name, func(t *testing.T) {
				h := &recorder{}
				p := newPeer(t, h, Options{})
				h.onRequest = func(req Request) {
					tt.check(t, req.ID)
					if err := a.answer(p.conn, req.ID); err != nil {
						t.Errorf("%s: %v", a.name, err)
					}
				}
				p.send(`{"jsonrpc":"2.0","id":` + tt.sent + `,"method":"fs/read_text_file","params":{"path":"/x"}}`)
				got := p.recv()
				want := `{"jsonrpc":"2.0","id":` + tt.echoed + `,` + a.member + `}`
				if got != want {
					t.Errorf("answer = %s\nwant     %s", got, want)
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				if len(h.requests) != 1 || string(h.requests[0].Params) != `{"path":"/x"}` || len(h.malformed) != 0 {
					t.Errorf("requests = %+v, malformed = %+v", h.requests, h.malformed)
				}
			})
		}
	}
}

// wantNumber checks a numeric id that is not an int64: it is neither a
// string nor an integer, and equals the id decoded from the same literal.
func wantNumber(lit string) func(*testing.T, ID) {
	return func(t *testing.T, id ID) {
		t.Helper()
		if _, ok := id.AsInt64(); ok {
			t.Errorf("AsInt64() ok for %s", id)
		}
		if _, ok := id.AsString(); ok {
			t.Errorf("AsString() ok for numeric id %s", id)
		}
		var same ID
		if err := same.UnmarshalJSON([]byte(lit)); err != nil || id != same || id.String() != lit {
			t.Errorf("id %s; want the id %s (%v)", id, lit, err)
		}
	}
}

// TestResponseWithOddIDAnswersNoCall checks that only the exact id of a call
// answers it: a response whose id is the same number written another way,
// or a string, is a response to no call (dropped, not malformed), and the
// call still takes its own response.
func TestResponseWithOddIDAnswersNoCall(t *testing.T) {
	for _, odd := range []string{`0.0`, `0e0`, `-0`, `0.5`, `"0"`, `1e400`, `-1`} {
		t.Run(odd, func(t *testing.T) {
			h := &recorder{}
			p := newPeer(t, h, Options{})
			done := make(chan json.RawMessage, 1)
			go func() {
				raw, err := p.conn.Call(context.Background(), "session/prompt", nil)
				if err != nil {
					t.Errorf("Call: %v", err)
				}
				done <- raw
			}()
			if req := p.recvRequest(); req.ID != 0 {
				t.Fatalf("call id %d, want 0", req.ID)
			}
			p.send(`{"jsonrpc":"2.0","id":` + odd + `,"result":"foreign"}`)
			p.send(`{"jsonrpc":"2.0","id":` + odd + `,"error":{"code":-32603,"message":"foreign"}}`)
			p.send(`{"jsonrpc":"2.0","id":0,"result":"own"}`)
			if got := <-done; string(got) != `"own"` {
				t.Errorf("call result %s; want the response with id 0", got)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.malformed) != 0 {
				t.Errorf("malformed = %+v; a response with id %s is well formed", h.malformed, odd)
			}
		})
	}
}

func wantInt(n int64) func(*testing.T, ID) {
	return func(t *testing.T, id ID) {
		t.Helper()
		if got, ok := id.AsInt64(); !ok || got != n {
			t.Errorf("AsInt64() = %d, %v; want %d", got, ok, n)
		}
		if _, ok := id.AsString(); ok {
			t.Errorf("AsString() ok for numeric id %s", id)
		}
		if id != IntID(n) {
			t.Errorf("id %s != IntID(%d)", id, n)
		}
	}
}

func wantNoInt(t *testing.T, id ID) {
	t.Helper()
	if _, ok := id.AsInt64(); ok {
		t.Errorf("AsInt64() ok for out-of-range id %s", id)
	}
}

func wantString(s string) func(*testing.T, ID) {
	return func(t *testing.T, id ID) {
		t.Helper()
		if got, ok := id.AsString(); !ok || got != s {
			t.Errorf("AsString() = %q, %v; want %q", got, ok, s)
		}
		if _, ok := id.AsInt64(); ok {
			t.Errorf("AsInt64() ok for string id %s", id)
		}
	}
}

func TestReplyError(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{
			name: "with data",
			err:  &Error{Code: CodeMethodNotFound, Message: "Method not found", Data: json.RawMessage(`{ "method" : "x" }`)},
			want: `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`,
		},
		{
			name: "without data",
			err:  &Error{Code: CodeRequestCancelled, Message: "cancelled"},
			want: `{"jsonrpc":"2.0","id":"r1","error":{"code":-32800,"message":"cancelled"}}`,
		},
		{
			name: "nil",
			want: `{"jsonrpc":"2.0","id":"r1","error":{"code":-32603,"message":"internal error"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan Request, 1)
			h := &recorder{onRequest: func(req Request) { got <- req }}
			p := newPeer(t, h, Options{})
			p.send(`{"jsonrpc":"2.0","id":"r1","method":"_vendor/x"}`)
			// Reply after HandleRequest returned, from another goroutine.
			req := <-got
			if req.Params != nil {
				t.Errorf("Params = %s, want nil", req.Params)
			}
			if err := p.conn.ReplyError(context.Background(), req.ID, tt.err); err != nil {
				t.Fatalf("ReplyError: %v", err)
			}
			if got := p.recv(); got != tt.want {
				t.Errorf("reply = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

func TestCallResult(t *testing.T) {
	p := newPeer(t, &recorder{}, Options{})
	type result struct {
		raw json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		raw, err := p.conn.Call(context.Background(), "initialize", map[string]int{"protocolVersion": 1})
		done <- result{raw, err}
	}()
	line := p.recv()
	if want := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`; line != want {
		t.Errorf("request = %s\nwant      %s", line, want)
	}
	p.send(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)
	res := <-done
	if res.err != nil || string(res.raw) != `{"protocolVersion":1}` {
		t.Fatalf("Call = %s, %v", res.raw, res.err)
	}
	// The next call gets the next id.
	go func() {
		raw, err := p.conn.Call(context.Background(), "session/new", nil)
		done <- result{raw, err}
	}()
	if line, want := p.recv(), `{"jsonrpc":"2.0","id":1,"method":"session/new"}`; line != want {
		t.Errorf("request = %s\nwant      %s", line, want)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"result":null}`)
	if res := <-done; res.err != nil || string(res.raw) != `null` {
		t.Fatalf("Call = %s, %v", res.raw, res.err)
	}
}

func TestConcurrentCallsAreCorrelated(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	const callers, perCaller = 8, 50

	// The peer answers every request from its own goroutine, so responses
	// come back in whatever order the scheduler picks.
	var answering sync.WaitGroup
	served := make(chan struct{})
	go func() {
		defer close(served)
		for range callers * perCaller {
			req := p.recvRequest()
			answering.Go(func() {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":%s}}`, req.ID, req.Params))
			})
		}
		answering.Wait()
	}()

	var wg sync.WaitGroup
	errs := make(chan error, callers*perCaller)
	for g := range callers {
		wg.Go(func() {
			for i := range perCaller {
				n := g*1000 + i
				raw, err := p.conn.Call(context.Background(), "echo", map[string]int{"n": n})
				if err != nil {
					errs <- err
					continue
				}
				if want := fmt.Sprintf(`{"echo":{"n":%d}}`, n); string(raw) != want {
					errs <- fmt.Errorf("call %d got %s", n, raw)
				}
			}
		})
	}
	wg.Wait()
	<-served
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCallsAnsweredInReverseOrder(t *testing.T) {
	p := newPeer(t, &recorder{}, Options{})
	const n = 3
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			raw, err := p.conn.Call(context.Background(), "m", i)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			results[i] = string(raw)
		})
	}
	reqs := make([]sentRequest, n)
	for i := range n {
		reqs[i] = p.recvRequest()
	}
	for i := n - 1; i >= 0; i-- {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":[%s]}`, reqs[i].ID, reqs[i].Params))
	}
	wg.Wait()
	for i, got := range results {
		if want := fmt.Sprintf("[%d]", i); got != want {
			t.Errorf("call %d got %s, want %s", i, got, want)
		}
	}
}

func TestCallErrorResponse(t *testing.T) {
	tests := []struct {
		name     string
		response string
		want     Error
	}{
		{
			name:     "with data",
			response: `{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`,
			want:     Error{Code: CodeMethodNotFound, Message: "Method not found", Data: json.RawMessage(`{"method":"x"}`)},
		},
		{
			name:     "without data",
			response: `{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"Authentication required"}}`,
			want:     Error{Code: CodeAuthRequired, Message: "Authentication required"},
		},
		{
			name:     "null data",
			response: `{"jsonrpc":"2.0","id":0,"error":{"code":7,"message":"other","data":null}}`,
			want:     Error{Code: 7, Message: "other"},
		},
		{
			name:     "null result beside the error",
			response: `{"jsonrpc":"2.0","id":0,"result":null,"error":{"code":-32603,"message":"boom","data":"trace"}}`,
			want:     Error{Code: CodeInternalError, Message: "boom", Data: json.RawMessage(`"trace"`)},
		},
		{
			name:     "members in another order",
			response: `{"error":{"message":"bad params","code":-32602},"id":0,"jsonrpc":"2.0"}`,
			want:     Error{Code: CodeInvalidParams, Message: "bad params"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPeer(t, &recorder{}, Options{})
			done := make(chan error, 1)
			go func() {
				_, err := p.conn.Call(context.Background(), "session/prompt", json.RawMessage(`{}`))
				done <- err
			}()
			p.recvRequest()
			p.send(tt.response)
			err := <-done
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("Call error = %v, want *Error", err)
			}
			if rpcErr.Code != tt.want.Code || rpcErr.Message != tt.want.Message || string(rpcErr.Data) != string(tt.want.Data) {
				t.Errorf("error = %+v (data %s), want %+v (data %s)", rpcErr, rpcErr.Data, tt.want, tt.want.Data)
			}
			if want := fmt.Sprintf("jsonrpc error %d: %s", tt.want.Code, tt.want.Message); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestCallContextCancel(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.conn.Call(ctx, "session/prompt", nil)
		done <- err
	}()
	req := p.recvRequest()
	p.syncWrites() // the request's write has returned: cancel only the wait
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call error = %v, want context.Canceled", err)
	}
	p.conn.mu.Lock()
	pending := len(p.conn.pending)
	p.conn.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d calls still pending after cancellation", pending)
	}

	// The late response is dropped; the connection goes on.
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"late"}`, req.ID))
	go func() {
		raw, err := p.conn.Call(context.Background(), "next", nil)
		if err == nil && string(raw) != `"fresh"` {
			err = fmt.Errorf("got %s", raw)
		}
		done <- err
	}()
	next := p.recvRequest()
	if next.ID == req.ID {
		t.Fatalf("id %d reused", next.ID)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"fresh"}`, next.ID))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	if len(h.malformed) != 0 {
		t.Errorf("malformed = %v", h.malformed)
	}
	h.mu.Unlock()

	// A context that has already ended fails before anything is sent.
	if _, err := p.conn.Call(ctx, "never", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with ended ctx = %v", err)
	}
}

func TestConnectionEndFailsPendingCalls(t *testing.T) {
	p := newPeer(t, &recorder{}, Options{})
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := p.conn.Call(context.Background(), "session/prompt", nil)
			errs <- err
		}()
	}
	for range n {
		p.recvRequest()
	}
	p.end()
	for range n {
		err := <-errs
		if !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
			t.Errorf("pending Call error = %v, want ErrClosed wrapping io.EOF", err)
		}
	}
	<-p.conn.Done()
	if err := p.conn.Err(); err != io.EOF {
		t.Errorf("Err() = %v, want io.EOF", err)
	}
	_, err := p.conn.Call(context.Background(), "after", nil)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("Call after end = %v, want ErrClosed wrapping io.EOF", err)
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(b, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadErrorEndsConnection(t *testing.T) {
	boom := errors.New("boom")
	// The partial line before the error is dropped, the complete one is not.
	r := &failingReader{data: []byte(`{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}`), err: boom}
	h := &recorder{}
	c := NewConn(r, io.Discard, h, Options{})
	c.Wait()
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Wait")
	}
	if err := c.Err(); err != boom {
		t.Errorf("Err() = %v, want boom", err)
	}
	if len(h.notifications) != 1 || h.notifications[0].method != "a" {
		t.Errorf("notifications = %v", h.notifications)
	}
	_, err := c.Call(context.Background(), "x", nil)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, boom) {
		t.Errorf("Call = %v, want ErrClosed wrapping boom", err)
	}
}

func TestErrIsNilBeforeEnd(t *testing.T) {
	p := newPeer(t, &recorder{}, Options{})
	if err := p.conn.Err(); err != nil {
		t.Errorf("Err() = %v before the end", err)
	}
	select {
	case <-p.conn.Done():
		t.Error("Done closed before the end")
	default:
	}
}

func TestNotificationsBeforeResponseAreHandledFirst(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	const n = 1000
	done := make(chan error, 1)
	go func() {
		_, err := p.conn.Call(context.Background(), "session/prompt", nil)
		done <- err
	}()
	req := p.recvRequest()
	for i := range n {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"seq":%d}}`, i))
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, req.ID))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// No synchronisation with the handler beyond Call returning.
	if got := h.notificationCount(); got != n {
		t.Fatalf("%d notifications handled when Call returned, want %d", got, n)
	}
	for i, nt := range h.notifications {
		if want := fmt.Sprintf(`{"seq":%d}`, i); nt.params != want {
			t.Fatalf("notification %d = %s, want %s", i, nt.params, want)
		}
	}
}

func TestClose(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	for range 2 {
		if err := p.conn.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	for name, err := range map[string]error{
		"Notify":     p.conn.Notify(context.Background(), "session/cancel", nil),
		"Reply":      p.conn.Reply(context.Background(), IntID(1), nil),
		"ReplyError": p.conn.ReplyError(context.Background(), IntID(1), &Error{Code: 1}),
		"Call":       second(p.conn.Call(context.Background(), "x", nil)),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	// Close does not stop the reader.
	p.send(`{"jsonrpc":"2.0","method":"still/reading"}`)
	p.end()
	p.conn.Wait()
	if len(h.notifications) != 1 || h.notifications[0].method != "still/reading" {
		t.Errorf("notifications = %v", h.notifications)
	}
}

func second[T any](_ T, err error) error { return err }

// failingWriter fails every write; short makes it report a short write
// without an error instead.
type failingWriter struct {
	short bool
	err   error
}

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.short {
		return len(b) / 2, nil
	}
	return 0, w.err
}

func TestWriteFailure(t *testing.T) {
	broken := errors.New("broken pipe")
	tests := []struct {
		name  string
		w     *failingWriter
		cause error
	}{
		{name: "error", w: &failingWriter{err: broken}, cause: broken},
		{name: "short write", w: &failingWriter{short: true}, cause: io.ErrShortWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w := io.Pipe()
			c := NewConn(r, tt.w, &recorder{}, Options{})
			defer func() {
				_ = w.Close()
				c.Wait()
			}()
			_, err := c.Call(context.Background(), "initialize", nil)
			if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, tt.cause) {
				t.Errorf("Call = %v, want ErrWriteFailed wrapping %v", err, tt.cause)
			}
			c.mu.Lock()
			pending := len(c.pending)
			c.mu.Unlock()
			if pending != 0 {
				t.Errorf("%d calls pending after a failed write", pending)
			}
			// The failure is sticky.
			for name, err := range map[string]error{
				"Notify":     c.Notify(context.Background(), "session/cancel", map[string]string{"sessionId": "s"}),
				"Reply":      c.Reply(context.Background(), StringID("x"), true),
				"ReplyError": c.ReplyError(context.Background(), StringID("x"), &Error{Code: CodeMethodNotFound}),
			} {
				if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, tt.cause) {
					t.Errorf("%s = %v, want ErrWriteFailed wrapping %v", name, err, tt.cause)
				}
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for the Conn's writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

func TestEncoding(t *testing.T) {
	r, w := io.Pipe()
	out := &lockedBuffer{}
	c := NewConn(r, out, &recorder{}, Options{})
	defer func() {
		_ = w.Close()
		c.Wait()
	}()
	tests := []struct {
		name    string
		send    func() error
		want    string
		wantErr bool
	}{
		{
			name: "notification without params",
			send: func() error { return c.Notify(context.Background(), "session/cancel", nil) },
			want: `{"jsonrpc":"2.0","method":"session/cancel"}` + "\n",
		},
		{
			name: "raw params are compacted",
			send: func() error {
				return c.Notify(context.Background(), "session/cancel", json.RawMessage("{\n  \"sessionId\": \"s\"\n}"))
			},
			want: `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n",
		},
		{
			name: "strings with newlines and html stay on one line",
			send: func() error {
				return c.Notify(context.Background(), "a\"b\n<c>", map[string]string{"text": "line1\nline2 <b>&"})
			},
			want: `{"jsonrpc":"2.0","method":"a\"b\n<c>","params":{"text":"line1\nline2 \u003cb\u003e\u0026"}}` + "\n",
		},
		{
			name: "empty method is still written",
			send: func() error { return c.Notify(context.Background(), "", nil) },
			want: `{"jsonrpc":"2.0","method":""}` + "\n",
		},
		{
			name: "nil result is null",
			send: func() error { return c.Reply(context.Background(), IntID(3), nil) },
			want: `{"jsonrpc":"2.0","id":3,"result":null}` + "\n",
		},
		{
			name: "null id",
			send: func() error { return c.Reply(context.Background(), ID{}, json.RawMessage(`{}`)) },
			want: `{"jsonrpc":"2.0","id":null,"result":{}}` + "\n",
		},
		{
			name:    "invalid raw params",
			send:    func() error { return c.Notify(context.Background(), "x", json.RawMessage(`{bad`)) },
			wantErr: true,
		},
		{
			name:    "unencodable params",
			send:    func() error { return c.Notify(context.Background(), "x", make(chan int)) },
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.send()
			if tt.wantErr {
				if err == nil || errors.Is(err, ErrWriteFailed) {
					t.Errorf("error = %v, want an encoding error", err)
				}
				if got := out.take(); got != "" {
					t.Errorf("wrote %q after an encoding error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.take(); got != tt.want {
				t.Errorf("wrote %s\nwant  %s", got, tt.want)
			}
		})
	}
}

func TestConcurrentWritesStayWholeLines(t *testing.T) {
	r, w := io.Pipe()
	out := &lockedBuffer{}
	c := NewConn(r, out, &recorder{}, Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				if err := c.Notify(context.Background(), "n", map[string]string{"text": strings.Repeat("x", g*i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	_ = w.Close()
	c.Wait()
	lines := strings.Split(strings.TrimSuffix(out.take(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved line %q", l)
		}
	}
}

func TestAmbiguousResponseFailsTheWaitingCall(t *testing.T) {
	tests := []struct {
		name     string
		response string // %d is the request id
	}{
		{name: "result and error", response: `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"},"error":{"code":-32603,"message":"boom"}}`},
		{name: "error first", response: `{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":%d,"result":false}`},
		{name: "error not an error object", response: `{"jsonrpc":"2.0","id":%d,"result":1,"error":"boom"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &recorder{}
			p := newPeer(t, h, Options{})
			done := make(chan error, 1)
			go func() {
				_, err := p.conn.Call(context.Background(), "session/prompt", nil)
				done <- err
			}()
			req := p.recvRequest()
			p.send(fmt.Sprintf(tt.response, req.ID))
			var err error
			select {
			case err = <-done:
			case <-time.After(hangCeiling):
				t.Fatal("Call still waiting after an ambiguous response")
			}
			var rpcErr *Error
			if !errors.Is(err, ErrAmbiguousResponse) || errors.As(err, &rpcErr) {
				t.Errorf("Call = %v, want ErrAmbiguousResponse and no *Error", err)
			}
			if !strings.Contains(err.Error(), "both result and error") {
				t.Errorf("error text %q does not say what happened", err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.malformed) != 0 {
				t.Errorf("malformed = %v", h.malformed)
			}
			p.conn.mu.Lock()
			defer p.conn.mu.Unlock()
			if len(p.conn.pending) != 0 {
				t.Errorf("%d calls still pending", len(p.conn.pending))
			}
		})
	}
}

func TestAmbiguousResponseWithoutWaitingCallIsMalformed(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	line := `{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"m"}}`
	p.send(line)
	p.send(`{"jsonrpc":"2.0","method":"after"}`)
	p.end()
	p.conn.Wait()
	if len(h.malformed) != 1 || h.malformed[0].line != line || !errors.Is(h.malformed[0].err, errResultAndError) {
		t.Errorf("malformed = %v", h.malformed)
	}
	if len(h.notifications) != 1 {
		t.Errorf("notifications = %v", h.notifications)
	}
}

// resultRecorder is a recorder that is also a ResultHandler: each request
// records the results seen before it.
type resultRecorder struct {
	recorder
	results     []string // "method result", in order
	seenByReqID map[string][]string
}

func (h *resultRecorder) HandleResult(method string, result json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results = append(h.results, method+" "+string(result))
}

func (h *resultRecorder) HandleRequest(req Request) {
	h.mu.Lock()
	h.seenByReqID[req.ID.String()] = append([]string(nil), h.results...)
	h.mu.Unlock()
	h.recorder.HandleRequest(req)
}

// TestResultHandlerSeesResultsBeforeLaterLines: a ResultHandler gets each
// successful response, with its call's method, before the line after it
// is handled, even when the caller has not woken yet; error responses and
// responses no call waits for are not reported.
func TestResultHandlerSeesResultsBeforeLaterLines(t *testing.T) {
	h := &resultRecorder{seenByReqID: map[string][]string{}}
	p := newPeerWith(t, h, &h.recorder, Options{})
	calls := make(chan error, 2)
	go func() {
		_, err := p.conn.Call(context.Background(), "session/new", nil)
		calls <- err
	}()
	first := p.recvRequest()
	go func() {
		_, err := p.conn.Call(context.Background(), "session/fork", nil)
		calls <- err
	}()
	second := p.recvRequest()
	p.send(`{"jsonrpc":"2.0","id":"r0","method":"session/request_permission","params":{}}`)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"s-1"}}`, first.ID))
	p.send(`{"jsonrpc":"2.0","id":"r1","method":"session/request_permission","params":{}}`)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"no"}}`, second.ID))
	p.send(`{"jsonrpc":"2.0","id":99,"result":{"sessionId":"late"}}`)
	p.send(`{"jsonrpc":"2.0","id":"r2","method":"session/request_permission","params":{}}`)
	for range 2 {
		<-calls
	}
	for deadline := time.Now().Add(hangCeiling); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		n := len(h.seenByReqID)
		h.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the 3 requests handled within %v", n, hangCeiling)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	want := map[string][]string{
		`"r0"`: nil,
		`"r1"`: {`session/new {"sessionId":"s-1"}`},
		`"r2"`: {`session/new {"sessionId":"s-1"}`},
	}
	for id, w := range want {
		if got := h.seenByReqID[id]; !slices.Equal(got, w) {
			t.Errorf("results seen before request %s = %q, want %q", id, got, w)
		}
	}
}
