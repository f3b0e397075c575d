package netserve

import (
	"bufio"
	"encoding/json"
	"net"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// link is one client connection, message by message.
type link interface {
	// authenticate checks the token the client presents (a byte
	// stream's first line); first is a message to forward afterwards,
	// nil when none. ok false means the client was answered and the link
	// is to be closed.
	authenticate(s *Server) (first []byte, ok bool)
	// read returns the next message, without terminator.
	read() ([]byte, error)
	// write sends one message; it may wait in a buffer until flush.
	write(msg []byte) error
	// flush sends what write buffered.
	flush() error
	// closeWrite tells the client nothing more comes (the runtime's
	// output ended).
	closeWrite()
	// close ends the link at once, ending a read or write in progress.
	close()
}

// streamLink is newline-delimited JSON-RPC on a byte stream.
type streamLink struct {
	conn net.Conn
	br   *bufio.Reader
	wmu  sync.Mutex
	bw   *bufio.Writer
	once sync.Once
}

func newStreamLink(conn net.Conn) *streamLink {
	return &streamLink{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), bw: bufio.NewWriterSize(conn, 64<<10)}
}

func (l *streamLink) authenticate(s *Server) ([]byte, bool) {
	if s.opts.Token == "" {
		return nil, true
	}
	_ = l.conn.SetReadDeadline(time.Now().Add(authBound))
	line, err := l.read()
	_ = l.conn.SetReadDeadline(time.Time{})
	if err != nil {
		return nil, false
	}
	var m netwire.Message
	if json.Unmarshal(line, &m) != nil {
		return nil, false
	}
	if m.Method != netwire.TokenMethod {
		if len(m.ID) > 0 {
			l.answer(m.ID, netwire.MsgTokenRequired)
		}
		return nil, false
	}
	if !s.authorized(m.Params.Token) {
		l.answer(m.ID, netwire.MsgTokenRefused)
		return nil, false
	}
	return nil, l.answer(m.ID, "") == nil
}

// answer answers the token request (or the first request) at once.
func (l *streamLink) answer(id json.RawMessage, msg string) error {
	if err := l.write(trim(netwire.Answer(id, msg))); err != nil {
		return err
	}
	return l.flush()
}

func trim(b []byte) []byte { return b[:len(b)-1] }

func (l *streamLink) read() ([]byte, error) { return netwire.ReadLine(l.br) }

func (l *streamLink) write(msg []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if _, err := l.bw.Write(msg); err != nil {
		return err
	}
	return l.bw.WriteByte('\n')
}

func (l *streamLink) flush() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.bw.Flush()
}

func (l *streamLink) closeWrite() {
	_ = l.flush()
	if cw, ok := l.conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	l.close()
}

func (l *streamLink) close() { l.once.Do(func() { _ = l.conn.Close() }) }
