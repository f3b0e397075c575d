package netserve

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// batchLimit bounds what a batchConn holds before it writes anyway.
const batchLimit = 256 << 10

// batchConn is a hijacked connection whose writes are held while a run
// of WebSocket frames is being written and go out in one write at its
// end (release): the WebSocket library flushes every frame, which would
// be one system call per message (docs/behaviour.md#network). Writes
// outside a run (the library's control frames) go out at once.
type batchConn struct {
	net.Conn
	mu   sync.Mutex
	hold bool
	buf  []byte
	err  error
}

// Write holds p during a run, else writes it (after anything held).
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.hold && len(b.buf)+len(p) <= batchLimit {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if err := b.writeOutLocked(); err != nil {
		return 0, err
	}
	return b.Conn.Write(p)
}

func (b *batchConn) writeOutLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	b.buf = b.buf[:0]
	if err != nil {
		b.err = err
	}
	return err
}

// batch starts a run.
func (b *batchConn) batch() {
	b.mu.Lock()
	b.hold = true
	b.mu.Unlock()
}

// release ends a run, writing what it held.
func (b *batchConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hold = false
	return b.writeOutLocked()
}

// batching is the ResponseWriter a WebSocket is accepted on: its
// hijacked connection is a batchConn.
type batching struct {
	http.ResponseWriter
	conn *batchConn
}

// Hijack hands over the connection as a batchConn.
func (b *batching) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(b.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	b.conn = &batchConn{Conn: conn}
	brw.Writer.Reset(b.conn)
	return b.conn, brw, nil
}
