package netserve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/ports"
)

// Bounds of a served connection.
const (
	// authBound bounds the wait for a byte stream's first line.
	authBound = 10 * time.Second
	// exitWindow is how long a runtime gets to exit once its standard
	// input ends, before it is terminated.
	exitWindow = time.Second
	// termWindow is how long it gets after the termination signal,
	// before the kill.
	termWindow = 2 * time.Second
	// shutdownBound bounds Serve's wait for the connections' teardown
	// once its context ended.
	shutdownBound = 10 * time.Second
)

// ErrTokenRequired refuses a listen address that is not loopback when no
// token is given.
var ErrTokenRequired = errors.New("a listen address that is not loopback needs a bearer token (--token-env VAR): anyone who reaches it could run the runtime")

// Options configure a Server.
type Options struct {
	// Listen is the address: tcp://HOST:PORT, unix:PATH or
	// http://HOST:PORT (a WebSocket and Streamable HTTP, both at /acp).
	// Port 0 picks a free port.
	Listen string
	// Command is the runtime's command line, split into words.
	Command []string
	// Workspace is the directory the runtimes run in (absolute).
	Workspace string
	// Token is the bearer token a client must present; "" asks none
	// (refused for an address that is not loopback).
	Token string
	// Launcher starts each connection's runtime.
	Launcher ports.Launcher
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// AbandonAfter ends a Streamable HTTP or WebSocket connection (and
	// its runtime) that had no event stream or WebSocket open and no
	// request for this long: how long a client that lost its link may
	// take to resume. Zero means DefaultAbandonAfter.
	AbandonAfter time.Duration
	// Retention is how many of a connection's latest messages are held
	// for a client that resumes after a cursor; zero means
	// DefaultRetention.
	Retention int
	// JournalDir, when set, is an existing directory where each
	// WebSocket or Streamable HTTP connection also keeps its messages on
	// disk (files journal-*, mode 0600, removed when the connection
	// ends), so that a client resuming after a cursor older than the
	// Retention held in memory is sent them from there
	// (docs/behaviour.md#held-sessions).
	JournalDir string
	// JournalBytes bounds each connection's journal on disk; zero means
	// DefaultJournalBytes. Past it, the oldest half is removed whole, and
	// a resume after a cursor no longer held is refused as without a
	// journal on disk.
	JournalBytes int64
	// OnConnection, when set, is called with a WebSocket connection's id
	// once it is made (before its first message is read), and
	// OnConnectionEnd once it ended and its runtime with it: how a holder
	// names the connection it holds and learns that it holds nothing
	// (docs/behaviour.md#held-sessions).
	OnConnection, OnConnectionEnd func(id string)
	// SameUserOnly, on a TCP or HTTP address, serves only the loopback
	// peers that run as this process's user (not root either): on Linux
	// the peer's socket is looked up in /proc/net/tcp and /proc/net/tcp6
	// and any other peer is closed before a byte of it is read; Listen
	// fails where those cannot be read. Elsewhere the token alone guards
	// (docs/behaviour.md#held-sessions). A unix socket's peer is always
	// checked.
	SameUserOnly bool
}

// retained is the resume the server advertises
// (capabilities.transport.resumable).
func (o Options) retained() netwire.Retention {
	return netwire.Retention{Messages: o.Retention, Seconds: o.AbandonAfter.Seconds()}
}

// Server is a listening acpdrive serve.
type Server struct {
	opts Options
	addr netwire.Address
	ln   net.Listener
	url  string

	mu     sync.Mutex
	conns  map[*served]struct{}
	links  map[string]*httpLink // Streamable HTTP connections by id
	socks  map[string]*wsConn   // WebSocket connections by id
	closed bool                 // shutdown began: no connection joins
	wg     sync.WaitGroup
}

// Listen checks o and starts listening; nothing is served before Serve.
// ErrTokenRequired (wrapped) refuses a non-loopback address without a
// token.
func Listen(o Options) (*Server, error) {
	addr, err := netwire.Parse(o.Listen)
	if err != nil {
		return nil, err
	}
	if len(o.Command) == 0 {
		return nil, errors.New("no runtime command to serve")
	}
	if o.Launcher == nil {
		return nil, errors.New("netserve: Options.Launcher is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AbandonAfter <= 0 {
		o.AbandonAfter = DefaultAbandonAfter
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.JournalDir != "" {
		if fi, err := os.Stat(o.JournalDir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("the journal's directory %s is not a directory", o.JournalDir)
		}
	}
	if o.JournalBytes <= 0 {
		o.JournalBytes = DefaultJournalBytes
	}
	s := &Server{opts: o, addr: addr, conns: map[*served]struct{}{}, links: map[string]*httpLink{}, socks: map[string]*wsConn{}}
	switch addr.Scheme {
	case netwire.SchemeTCP, netwire.SchemeHTTP:
		if o.Token == "" && !netwire.Loopback(addr.Host) {
			return nil, fmt.Errorf("%s: %w", addr.Host, ErrTokenRequired)
		}
		if s.ln, err = listenTCP(addr.Host, o); err != nil {
			return nil, err
		}
		host := s.ln.Addr().String()
		if h, _, err := net.SplitHostPort(addr.Host); err == nil && h != "" {
			_, port, _ := net.SplitHostPort(host)
			host = net.JoinHostPort(h, port)
		}
		if addr.Scheme == netwire.SchemeTCP {
			s.url = "tcp://" + host
		} else {
			s.url = "http://" + host + netwire.Path
		}
	case netwire.SchemeUnix:
		if s.ln, err = listenUnix(addr.Host); err != nil {
			return nil, err
		}
		s.url = "unix:" + addr.Host
	default:
		return nil, fmt.Errorf("cannot listen at %s: serve listens at tcp://HOST:PORT, unix:PATH or http://HOST:PORT", o.Listen)
	}
	return s, nil
}

// listenUnix makes the socket, for its owner only.
func listenUnix(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// URL is the address a client dials: tcp://HOST:PORT, unix:PATH or
// http://HOST:PORT/acp (Streamable HTTP; the WebSocket is the same
// address as ws://), with the port the listener got.
func (s *Server) URL() string { return s.url }

// Serve serves connections until ctx ends, then closes the listener,
// ends every connection's runtime and returns once they are torn down
// (bounded). It returns nil after ctx ended.
func (s *Server) Serve(ctx context.Context) error {
	var err error
	if s.addr.Scheme == netwire.SchemeHTTP {
		err = s.serveHTTP(ctx)
	} else {
		err = s.serveStream(ctx)
	}
	s.shutdown()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// serveStream accepts byte-stream connections until ctx ends.
func (s *Server) serveStream(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = s.ln.Close() })
	defer stop()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if s.addr.Scheme == netwire.SchemeUnix && !sameUser(conn) {
			s.opts.Logger.Warn("refused a connection of another user")
			_ = conn.Close()
			continue
		}
		s.start(ctx, newStreamLink(conn))
	}
}

// serveHTTP answers the WebSocket at /acp until ctx ends.
func (s *Server) serveHTTP(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc(netwire.Path, func(w http.ResponseWriter, r *http.Request) { s.handleHTTP(ctx, w, r) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: authBound}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// The WebSocket handlers are hijacked: Close ends the listener and
	// idle connections; the served links end through shutdown.
	_ = hs.Close()
	<-done
	return nil
}

// authorized checks a presented token in constant time.
func (s *Server) authorized(presented string) bool {
	if s.opts.Token == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(presented), []byte(s.opts.Token)) == 1
}

// bearer is the token of an Authorization header.
func bearer(h string) string {
	if v, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// join registers a link the server awaits; false (and the link closed)
// once shutdown began.
func (s *Server) join(l link) (*served, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		l.close()
		return nil, false
	}
	sv := &served{s: s, l: l}
	s.conns[sv] = struct{}{}
	s.wg.Add(1)
	return sv, true
}

// track counts a handler the server awaits; false once shutdown began.
func (s *Server) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// leave unregisters a served link.
func (s *Server) leave(sv *served) {
	s.mu.Lock()
	delete(s.conns, sv)
	s.mu.Unlock()
	s.wg.Done()
}

// start serves one link in a goroutine the server awaits.
func (s *Server) start(ctx context.Context, l link) {
	sv, ok := s.join(l)
	if !ok {
		return
	}
	go func() {
		defer s.leave(sv)
		sv.run(ctx)
	}()
}

// shutdown ends every link (each ends its runtime) and waits, bounded.
func (s *Server) shutdown() {
	_ = s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for sv := range s.conns {
		sv.l.close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(shutdownBound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.opts.Logger.Warn("connections were still being torn down when serve ended")
	}
}

// Close releases the listener of a Server that is not to Serve; Serve
// releases it itself when its context ends.
func (s *Server) Close() error {
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
