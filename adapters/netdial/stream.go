package netdial

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
)

// errClosed is what closing a link twice reports; it is not an error of
// teardown.
var errClosed = net.ErrClosed

// dialStream connects to a tcp or unix address and exchanges the token.
func dialStream(ctx context.Context, l *Launcher, token string) (*process, error) {
	d := net.Dialer{KeepAlive: keepAlive}
	conn, err := d.DialContext(ctx, l.addr.Network(), l.addr.Host)
	if err != nil {
		return nil, domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+l.addr.URL, err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	if token != "" {
		if err := exchangeToken(ctx, l, conn, br, token); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	p := newProcess(l.addr.URL)
	p.closeNow = sync.OnceValue(conn.Close)
	p.stdin = &streamStdin{conn: conn}
	p.stdout = &streamStdout{r: br, p: p}
	return p, nil
}

// exchangeToken sends the token request and reads its answer, within
// ctx.
func exchangeToken(ctx context.Context, l *Launcher, conn net.Conn, br *bufio.Reader, token string) error {
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(netwire.TokenRequest(token)); err != nil {
		return domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+l.addr.URL, err)
	}
	line, err := netwire.ReadLine(br)
	if err != nil {
		return domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+l.addr.URL, err)
	}
	_ = conn.SetDeadline(time.Time{})
	var m netwire.Message
	if err := json.Unmarshal(line, &m); err != nil {
		return domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+l.addr.URL, err)
	}
	if m.Error != nil {
		return l.tokenRefused(m.Error.Message)
	}
	return nil
}

// streamStdin is the sending side of a byte stream: Close half-closes the
// link, so the server sees the end of its runtime's standard input.
type streamStdin struct {
	conn net.Conn
	once sync.Once
	err  error
}

// Write sends bytes.
func (s *streamStdin) Write(b []byte) (int, error) { return s.conn.Write(b) }

// SetWriteDeadline bounds the next writes.
func (s *streamStdin) SetWriteDeadline(t time.Time) error { return s.conn.SetWriteDeadline(t) }

// Close half-closes the link once.
func (s *streamStdin) Close() error {
	s.once.Do(func() {
		if cw, ok := s.conn.(interface{ CloseWrite() error }); ok {
			s.err = ignoreClosed(cw.CloseWrite())
		}
	})
	return s.err
}

// streamStdout is the receiving side: its end is the process's end.
type streamStdout struct {
	r *bufio.Reader
	p *process
}

// Read reads bytes; an error (end of stream included) ends the process.
func (s *streamStdout) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if err != nil {
		s.p.ended(err, errors.Is(err, io.EOF))
	}
	return n, err
}

// withWriteDeadline is parent bounded by the write deadline d holds (a
// SetWriteDeadline's), when one is set.
func withWriteDeadline(parent context.Context, d *atomic.Pointer[time.Time]) (context.Context, context.CancelFunc) {
	if t := d.Load(); t != nil && !t.IsZero() {
		return context.WithDeadline(parent, *t)
	}
	return parent, func() {}
}
