package netdial

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
)

// dialWebSocket opens the WebSocket, the token in its Authorization
// header.
func dialWebSocket(ctx context.Context, l *Launcher, token string) (*process, error) {
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: l.tls, ForceAttemptHTTP2: false,
	}}
	c, resp, err := websocket.Dial(ctx, l.addr.URL, &websocket.DialOptions{HTTPClient: client, HTTPHeader: hdr})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return nil, l.tokenRefused(resp.Status)
		}
		return nil, domain.WrapError(domain.KindPortExit, MsgConnectFailed+" "+l.addr.URL, err)
	}
	c.SetReadLimit(netwire.MaxMessageBytes)
	p := newProcess(l.addr.URL)
	p.closeNow = sync.OnceValue(c.CloseNow)
	var buf bytes.Buffer // one frame at a time; FrameReader copies it
	p.stdout = &netwire.FrameReader{Next: func() ([]byte, error) {
		_, r, err := c.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			normal := websocket.CloseStatus(err) == websocket.StatusNormalClosure
			p.ended(err, normal)
			if normal {
				return nil, io.EOF // the stream's end, as a process's
			}
			return nil, err
		}
		return buf.Bytes(), nil
	}}
	w := &wsStdin{c: c, p: p}
	w.lw.Send = w.send
	p.stdin = w
	return p, nil
}

// wsStdin is the sending side of a WebSocket: each line one text frame;
// Close starts the close handshake (bounded by the library's own wait).
type wsStdin struct {
	c        *websocket.Conn
	p        *process
	lw       netwire.LineWriter
	deadline atomic.Pointer[time.Time]
	once     sync.Once
	closed   atomic.Bool
}

// Write sends every complete line as one frame.
func (w *wsStdin) Write(b []byte) (int, error) {
	if w.closed.Load() {
		return 0, errClosed
	}
	return w.lw.Write(b)
}

func (w *wsStdin) send(msg []byte) error {
	ctx := context.Background()
	if d := w.deadline.Load(); d != nil && !d.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, *d)
		defer cancel()
	}
	return w.c.Write(ctx, websocket.MessageText, msg)
}

// SetWriteDeadline bounds the next writes; a write past it breaks the
// link (the library closes it).
func (w *wsStdin) SetWriteDeadline(t time.Time) error {
	w.deadline.Store(&t)
	return nil
}

// Close starts the close handshake once, in a goroutine Release awaits.
func (w *wsStdin) Close() error {
	w.once.Do(func() {
		w.closed.Store(true)
		w.p.wg.Add(1)
		go func() {
			defer w.p.wg.Done()
			err := w.c.Close(websocket.StatusNormalClosure, "")
			if err != nil && !errors.Is(err, errClosed) {
				_ = w.c.CloseNow()
			}
		}()
	})
	return nil
}
