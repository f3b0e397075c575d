// Package reportsock is the private socket over which a helper process
// acpdrive starts (the tool-server beacon, the result server) reports back
// to the session that armed it: a unix socket in a directory of its own,
// a random token, one JSON line per connection carrying that token, read
// within a bound. It is shared by adapters and imports none.
package reportsock

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// MaxSocketPath bounds the socket's path: a unix socket's path must fit
// sun_path (108 bytes on Linux, 104 on macOS), with room to spare.
const MaxSocketPath = 100

// ReadBound is how long a connection may take to deliver its line.
const ReadBound = 5 * time.Second

// Handler takes one report line whose token matched, on the listener's
// goroutine; conn may be written to (an acknowledgement) before it closes.
type Handler func(line []byte, conn net.Conn)

// Listener is one armed socket. Close releases it.
type Listener struct {
	log     *slog.Logger
	what    string
	dir     string
	path    string
	token   string
	maxLine int
	handle  Handler
	ln      net.Listener

	mu       sync.Mutex // guards conn and released
	conn     net.Conn   // the connection being read, closed by Close
	released bool

	release sync.Once
	err     error
	done    chan struct{} // closed when accept returned
}

// Listen creates a private directory under parent (named prefix plus a
// random suffix), a token, and a socket in the directory, and serves it:
// each connection delivers at most one line of at most maxLine bytes,
// read within ReadBound, handed to handle when its "token" field matches.
// what names the helper in errors and logs.
func Listen(parent, prefix, what string, maxLine int, log *slog.Logger, handle Handler) (*Listener, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("%s token: %w", what, err)
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("%s directory: %w", what, err)
	}
	path := filepath.Join(dir, "s")
	if len(path) > MaxSocketPath {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s socket path %q is longer than %d bytes: set a shorter temporary directory", what, path, MaxSocketPath)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s socket: %w", what, err)
	}
	l := &Listener{log: log, what: what, dir: dir, path: path, token: hex.EncodeToString(raw),
		maxLine: maxLine, handle: handle, ln: ln, done: make(chan struct{})}
	go l.accept()
	return l, nil
}

// Dir is the listener's private directory; Close removes it.
func (l *Listener) Dir() string { return l.dir }

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Token is what a report must carry.
func (l *Listener) Token() string { return l.token }

// Close closes the socket and the connection being read, awaits the
// listener's goroutine and removes the directory. It is idempotent.
func (l *Listener) Close() error {
	l.release.Do(func() {
		err := l.ln.Close()
		l.mu.Lock()
		l.released = true
		if l.conn != nil {
			_ = l.conn.Close()
		}
		l.mu.Unlock()
		<-l.done
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
		l.err = errors.Join(err, os.RemoveAll(l.dir))
	})
	return l.err
}

func (l *Listener) accept() {
	defer close(l.done)
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.read(conn)
	}
}

func (l *Listener) read(conn net.Conn) {
	defer conn.Close()
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.conn = conn
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.conn = nil
		l.mu.Unlock()
	}()
	_ = conn.SetDeadline(time.Now().Add(ReadBound))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 4096), l.maxLine)
	if !sc.Scan() {
		return
	}
	var r struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
		l.log.Debug("a report did not decode", "helper", l.what, "error", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Token), []byte(l.token)) != 1 {
		l.log.Debug("a report carried another token", "helper", l.what)
		return
	}
	l.handle(sc.Bytes(), conn)
}
