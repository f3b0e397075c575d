package netserve

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/ports"
)

// served is one connection and the runtime serving it.
type served struct {
	s *Server
	l link
}

// handleHTTP checks the token, then upgrades /acp to a WebSocket or
// answers it as Streamable HTTP.
func (s *Server) handleHTTP(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if !s.authorized(bearer(r.Header.Get("Authorization"))) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, netwire.MsgTokenRefused, http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.handleStreamable(ctx, w, r)
		return
	}
	s.handleWebSocket(ctx, w, r)
}

// run authenticates the client, starts its runtime, forwards both ways
// until either side ends, and tears the runtime down (bounded).
func (sv *served) run(ctx context.Context) {
	s, log := sv.s, sv.s.opts.Logger
	defer sv.l.close()
	first, ok := sv.l.authenticate(s)
	if !ok {
		log.Info("refused a connection without the token")
		return
	}
	plan, err := s.opts.Launcher.Prepare(ports.LaunchRequest{Command: s.opts.Command, Workspace: s.opts.Workspace})
	if err != nil {
		log.Warn("could not prepare the runtime", "error", err)
		return
	}
	proc, err := plan.Start(ctx, nil)
	if err != nil {
		log.Warn("could not start the runtime", "error", err)
		return
	}
	log.Info("runtime started for a connection", "agent_pid", proc.Identity().PID)
	var wg sync.WaitGroup
	wg.Add(2)
	clientGone, pumped := make(chan struct{}), make(chan struct{})
	go func() { // client → runtime
		defer wg.Done()
		defer close(clientGone)
		var line []byte // the message and its terminator, reused
		if first != nil {
			if _, err := proc.Stdin().Write(append(first, '\n')); err != nil {
				return
			}
		}
		for {
			msg, err := sv.l.read()
			if err != nil {
				return
			}
			line = append(append(line[:0], msg...), '\n')
			if _, err := proc.Stdin().Write(line); err != nil {
				return
			}
		}
	}()
	go func() { // runtime → client
		defer wg.Done()
		defer close(pumped)
		br := bufio.NewReaderSize(proc.Stdout(), 64<<10)
		for {
			msg, err := netwire.ReadLine(br)
			if errors.Is(err, netwire.ErrTooLong) {
				log.Warn("dropped a runtime line over the transport's bound")
				continue
			}
			if err != nil {
				sv.l.closeWrite()
				return
			}
			if len(msg) == 0 {
				if br.Buffered() == 0 {
					_ = sv.l.flush()
				}
				continue
			}
			err = sv.l.write(msg)
			if err == nil && br.Buffered() == 0 {
				// Nothing more waiting: send what was buffered before the
				// next read may block.
				err = sv.l.flush()
			}
			if err != nil {
				sv.l.close()
				return
			}
		}
	}()
	select {
	case <-clientGone:
	case <-proc.Exited():
	case <-ctx.Done():
	}
	sv.teardown(proc, pumped)
	sv.l.close()
	wg.Wait()
	if err := proc.Release(); err != nil {
		log.Debug("runtime release", "error", err)
	}
	log.Info("connection ended", "agent_pid", proc.Identity().PID, "exit", proc.Exit().String())
}

// teardown ends the runtime: standard input closed, a window to exit,
// the termination signal, then the kill of its whole tree
// (docs/behaviour.md#teardown, as the local runtime's).
//
// What the runtime wrote before it exited is forwarded first (pumped,
// bounded by exitWindow).
func (sv *served) teardown(proc ports.Process, pumped <-chan struct{}) {
	_ = proc.Stdin().Close()
	if !waitFor(proc.Exited(), exitWindow) {
		_ = proc.Terminate()
		waitFor(proc.Exited(), termWindow)
	}
	waitFor(pumped, exitWindow)
	if err := proc.Kill(); err != nil {
		sv.s.opts.Logger.Warn("processes of the served runtime survived", "error", err)
	}
	_ = proc.CloseStdout()
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
