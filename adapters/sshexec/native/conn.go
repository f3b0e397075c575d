package native

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/acpdrive/acpdrive/domain"
)

// Stage says how far a connection attempt got before it failed.
type Stage string

// Stages of a connection attempt.
const (
	// StageConfig: the client configuration or Options.Host could not be
	// resolved; nothing was dialled.
	StageConfig Stage = "config"
	// StageConnect: the TCP connection could not be made (refused,
	// unreachable, timed out). Nothing was said to an SSH server, so
	// trying the next host is safe; this is the native counterpart of the
	// ssh binary's exit 255 before the handshake.
	StageConnect Stage = "connect"
	// StageHandshake: the SSH handshake failed (protocol, algorithms, a
	// connection dropped half way).
	StageHandshake Stage = "handshake"
	// StageHostKey: the server's host key was refused (see HostKeyError).
	StageHostKey Stage = "host-key"
	// StageAuth: no offered credential was accepted.
	StageAuth Stage = "auth"
)

// DialError is the cause of a Start error (kind port_exit) when no SSH
// connection to the host could be made. errors.As finds it through the
// *domain.AgentError.
type DialError struct {
	// Host is the host as configured (Options.Host).
	Host string
	// Addr is the host:port dialled ("" at StageConfig).
	Addr string
	// Stage is how far the attempt got.
	Stage Stage
	// Err is the reason.
	Err error
}

func (e *DialError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("ssh %s: %s: %v", e.Host, e.Stage, e.Err)
	}
	return fmt.Sprintf("ssh %s (%s): %s: %v", e.Host, e.Addr, e.Stage, e.Err)
}

func (e *DialError) Unwrap() error { return e.Err }

// Is makes a connection that failed before any SSH exchange match
// domain.ErrHostUnreachable, on which app.Start tries the next host.
func (e *DialError) Is(target error) bool {
	return target == domain.ErrHostUnreachable && e.Stage == StageConnect
}

// Unreachable reports whether err (a Start error or anything wrapping a
// *DialError) says the host could not be reached at all: the TCP
// connection failed before any SSH exchange. A caller holding several
// hosts moves on to the next one on it.
func Unreachable(err error) bool {
	var de *DialError
	return errors.As(err, &de) && de.Stage == StageConnect
}

// Connection bounds.
const (
	// connCloseBound is how long releasing the last session waits for the
	// connection's goroutines to end.
	connCloseBound = 2 * time.Second
)

// sharedConn is one SSH connection serving every session of a Launcher.
// Its reference count is guarded by the Launcher's mutex.
type sharedConn struct {
	l     *Launcher
	ready chan struct{} // closed once the dial has finished
	err   error         // the dial's error; valid once ready is closed

	// Set by the dial; read-only afterwards.
	client *ssh.Client
	nc     net.Conn
	addr   string

	refs int // sessions using it (and waiters for its dial); Launcher.mu

	dead      chan struct{} // closed once the connection has ended
	deadMu    sync.Mutex
	deadErr   error  // why it ended, valid once dead is closed
	failCause string // a reason this side gave (keepalive), preferred over the transport's error
	closing   bool   // this side closed it (the last session was released)

	wg sync.WaitGroup // the connection's own goroutines
}

// acquire returns the launcher's connection, dialling it when there is
// none, and counts the caller as one of its users. The caller releases it.
func (l *Launcher) acquire(ctx context.Context) (*sharedConn, error) {
	for {
		l.mu.Lock()
		c := l.conn
		if c == nil {
			c = &sharedConn{l: l, ready: make(chan struct{}), dead: make(chan struct{}), refs: 1}
			l.conn = c
			l.mu.Unlock()
			c.err = c.dial(ctx)
			close(c.ready)
			if c.err != nil {
				l.drop(c)
				return nil, c.err
			}
			return c, nil
		}
		c.refs++
		l.mu.Unlock()
		select {
		case <-c.ready:
		case <-ctx.Done():
			c.release()
			return nil, ctx.Err()
		}
		if c.err != nil {
			c.release()
			if errors.Is(c.err, context.Canceled) && ctx.Err() == nil {
				continue // the dialling caller gave up; this one has not
			}
			return nil, c.err
		}
		select {
		case <-c.dead:
			c.release() // died meanwhile; drop() has cleared l.conn
			continue
		default:
		}
		return c, nil
	}
}

// drop forgets c as the launcher's connection, so that the next Start
// dials anew.
func (l *Launcher) drop(c *sharedConn) {
	l.mu.Lock()
	if l.conn == c {
		l.conn = nil
	}
	l.mu.Unlock()
}

// release ends one use of c; the last one closes the connection and waits
// (bounded) for its goroutines.
func (c *sharedConn) release() error {
	c.l.mu.Lock()
	c.refs--
	last := c.refs == 0
	if last && c.l.conn == c {
		c.l.conn = nil
	}
	c.l.mu.Unlock()
	if !last {
		return nil
	}
	select {
	case <-c.ready:
	default:
		return nil // still dialling: the dialler holds a reference, so this cannot be the last
	}
	if c.client == nil {
		return nil
	}
	c.deadMu.Lock()
	c.closing = true
	c.deadMu.Unlock()
	_ = c.client.Close()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	t := time.NewTimer(connCloseBound)
	defer t.Stop()
	select {
	case <-done:
		c.l.logger.Debug("ssh connection closed", slog.String("host", c.l.host), slog.String("addr", c.addr))
		return nil
	case <-t.C:
		return fmt.Errorf("native ssh: the connection to %s did not shut down within %v", c.l.host, connCloseBound)
	}
}

// fail closes the connection with a reason of this side's own.
func (c *sharedConn) fail(reason string) {
	c.deadMu.Lock()
	if c.failCause == "" {
		c.failCause = reason
	}
	c.deadMu.Unlock()
	_ = c.nc.Close()
}

// lostReason says why the connection ended, once dead is closed.
func (c *sharedConn) lostReason() string {
	c.deadMu.Lock()
	defer c.deadMu.Unlock()
	if c.failCause != "" {
		return c.failCause
	}
	if c.deadErr == nil {
		return "connection closed"
	}
	return c.deadErr.Error()
}

// dial connects, checks the host key, authenticates and starts the
// connection's goroutines. Errors are *DialError values.
func (c *sharedConn) dial(ctx context.Context) error {
	l := c.l
	home, localUser := l.home, l.localUser
	s, err := resolve(l.opts, home, localUser)
	if err != nil {
		return &DialError{Host: l.host, Stage: StageConfig, Err: err}
	}
	c.addr = s.addr()
	fail := func(stage Stage, err error) error {
		return &DialError{Host: l.host, Addr: c.addr, Stage: stage, Err: err}
	}

	dctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
	defer cancel()
	nc, err := l.dialer(dctx, "tcp", c.addr)
	if err != nil {
		return fail(StageConnect, err)
	}
	// The handshake is bounded by the same timeout and by ctx: a server
	// that accepts and then says nothing cannot hold the start.
	if d, ok := dctx.Deadline(); ok {
		_ = nc.SetDeadline(d)
	}
	stopCancel := context.AfterFunc(dctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })

	checker := &hostKeyChecker{policy: s.strict, files: s.knownHosts, onAdd: func(file, host string) {
		l.logger.Info("added a new host key to known_hosts", slog.String("host", host), slog.String("file", file))
	}}
	var hostKeyErr error
	hostKeyCB := checker.callback()
	signers, closeAgent := l.signers(s)
	defer closeAgent()
	cfg := &ssh.ClientConfig{
		User: s.user,
		Auth: []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) { return signers, nil })},
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			err := hostKeyCB(hostname, remote, key)
			hostKeyErr = err
			return err
		},
		HostKeyAlgorithms: checker.algorithms(c.addr),
		Timeout:           s.connectTimeout,
	}
	sc, chans, reqs, err := ssh.NewClientConn(nc, c.addr, cfg)
	stopped := stopCancel()
	if err != nil {
		_ = nc.Close()
		switch {
		case hostKeyErr != nil:
			return fail(StageHostKey, hostKeyErr)
		case ctx.Err() != nil:
			return fail(StageHandshake, ctx.Err())
		case strings.Contains(err.Error(), "unable to authenticate"):
			return fail(StageAuth, fmt.Errorf("%w (user %s, %d key(s) offered)", err, s.user, len(signers)))
		default:
			return fail(StageHandshake, err)
		}
	}
	if !stopped {
		// ctx ended just as the handshake finished; the deadline set in
		// the past may have hit the connection.
		_ = sc.Close()
		return fail(StageHandshake, context.Cause(dctx))
	}
	_ = nc.SetDeadline(time.Time{})
	c.nc = nc
	c.client = ssh.NewClient(sc, chans, reqs)
	l.handshakes.Add(1)
	l.logger.Debug("ssh connection established", slog.String("host", l.host), slog.String("addr", c.addr),
		slog.String("user", s.user), slog.String("strict_host_key_checking", s.strict))

	c.wg.Add(1)
	go c.watch()
	if s.aliveInterval > 0 && s.aliveCountMax > 0 {
		c.wg.Add(1)
		go c.keepalive(s.aliveInterval, s.aliveCountMax)
	}
	return nil
}

// watch waits for the connection to end, records why and forgets it.
func (c *sharedConn) watch() {
	defer c.wg.Done()
	err := c.client.Wait()
	c.deadMu.Lock()
	c.deadErr = err
	closing := c.closing
	c.deadMu.Unlock()
	close(c.dead)
	c.l.drop(c)
	if !closing {
		c.l.logger.Warn("ssh connection lost", slog.String("host", c.l.host), slog.String("reason", c.lostReason()))
	}
}

// keepalive sends a keepalive@openssh.com global request every interval
// and closes the connection once countMax of them in a row have gone
// unanswered (OpenSSH's ServerAliveInterval and ServerAliveCountMax). Any
// reply, even a refusal, proves the server alive.
func (c *sharedConn) keepalive(interval time.Duration, countMax int) {
	defer c.wg.Done()
	answered := make(chan struct{}, 1)
	t := time.NewTicker(interval)
	defer t.Stop()
	unanswered := 0
	inFlight := false
	for {
		select {
		case <-c.dead:
			return
		case <-answered:
			unanswered, inFlight = 0, false
		case <-t.C:
			if unanswered >= countMax {
				c.fail(fmt.Sprintf("timeout: %s did not answer %d keepalive requests sent %v apart", c.l.host, countMax, interval))
				return
			}
			unanswered++
			if inFlight {
				continue // the last one is still unanswered; count it again
			}
			inFlight = true
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				if _, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil); err != nil {
					return // the connection is gone; watch reports it
				}
				select {
				case answered <- struct{}{}:
				default:
				}
			}()
		}
	}
}

// signers returns the keys to offer: the agent's (unless IdentitiesOnly)
// then the identity files that exist and are not passphrase-protected.
// The returned function closes the agent connection.
func (l *Launcher) signers(s settings) ([]ssh.Signer, func()) {
	var out []ssh.Signer
	closeAgent := func() {}
	sock := l.opts.AgentSocket
	if sock == "" {
		sock = os.Getenv("SSH_AUTH_SOCK")
	}
	if sock != "" && sock != NoAgent && !s.identitiesOnly {
		if ac, err := net.Dial("unix", sock); err != nil {
			l.logger.Debug("ssh agent unavailable", slog.String("error", err.Error()))
		} else {
			closeAgent = func() { _ = ac.Close() }
			if ss, err := agent.NewClient(ac).Signers(); err != nil {
				l.logger.Debug("ssh agent listed no keys", slog.String("error", err.Error()))
			} else {
				out = append(out, ss...)
			}
		}
	}
	for _, f := range s.identities {
		b, err := os.ReadFile(f)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				l.logger.Debug("identity file unreadable", slog.String("file", f), slog.String("error", err.Error()))
			}
			continue
		}
		sg, err := ssh.ParsePrivateKey(b)
		if err != nil {
			// A passphrase-protected key cannot be used without a person
			// (ssh's BatchMode); the agent is the way to offer it.
			l.logger.Debug("identity file not usable", slog.String("file", f), slog.String("error", err.Error()))
			continue
		}
		out = append(out, sg)
	}
	return out, closeAgent
}
