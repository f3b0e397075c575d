package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/adapters/linewatch"
	"github.com/acpdrive/acpdrive/adapters/netserve"
	"github.com/acpdrive/acpdrive/wiring"
)

// holdServeArgs are what a holder serves.
type holdServeArgs struct {
	dir, workspace, token string
	lease                 time.Duration
	command               []string
}

// holdServe serves a.command on loopback HTTP (a resumable WebSocket at
// /acp), its URL the first line on stdout, until it holds nothing: the
// connection ended (its client closed it, or no client resumed it within
// the lease), or no connection came within the lease, or SIGTERM/SIGINT.
func holdServe(ctx context.Context, a holdServeArgs, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var once sync.Once
	connected := make(chan struct{})
	srv, err := netserve.Listen(netserve.Options{
		Listen: "http://127.0.0.1:0", Command: a.command, Workspace: a.workspace, Token: a.token,
		Launcher:     linewatch.Wrap(wiring.NewLocalLauncher(logger, localSettings()), newStatusRecorder(a.dir, a.command).hooks()),
		Logger:       logger,
		AbandonAfter: a.lease,
		SameUserOnly: true, // only its owner attaches (docs/behaviour.md#held-sessions)
		// The journal on disk, in the holder's 0700 directory: an attach
		// from the first message after more than the messages held in
		// memory (docs/behaviour.md#held-sessions).
		JournalDir: a.dir, JournalBytes: netserve.DefaultJournalBytes,
		OnConnection: func(id string) {
			once.Do(func() {
				if err := os.WriteFile(filepath.Join(a.dir, holdConnFile), []byte(id), 0o600); err != nil {
					logger.Error("could not record the connection", "error", err)
				}
				close(connected)
			})
		},
		OnConnectionEnd: func(string) { cancel() }, // one session a holder: it holds nothing now
	})
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive __holder: %v\n", err)
		return exitUsage
	}
	for name, v := range map[string]string{holdURLFile: srv.URL(), holdPIDFile: strconv.Itoa(os.Getpid())} {
		if err := os.WriteFile(filepath.Join(a.dir, name), []byte(v), 0o600); err != nil {
			_ = srv.Close()
			fmt.Fprintf(stderr, "acpdrive __holder: %v\n", err)
			return exitNoSession
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // no connection within the lease: nothing to hold
		defer wg.Done()
		t := time.NewTimer(a.lease)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-connected:
		case <-ctx.Done():
		}
	}()
	defer wg.Wait()
	fmt.Fprintln(stdout, srv.URL())
	if c, ok := stdout.(io.Closer); ok {
		_ = c.Close() // the caller that read the URL may be gone long before the holder
	}
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "acpdrive __holder: %v\n", err)
		return exitNoSession
	}
	return exitOK
}
