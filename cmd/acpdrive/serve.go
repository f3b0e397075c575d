package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/acpdrive/acpdrive/adapters/netserve"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// serveCommand is "acpdrive serve --listen ADDR [--token-env VAR] --
// COMMAND...": a stdio runtime served at a network address, one process
// per connection (docs/behaviour.md#network). The first line on standard
// output, once it listens, is the URL a client dials.
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "", "where to listen: tcp://HOST:PORT, unix:PATH or http://HOST:PORT (WebSocket and Streamable HTTP at /acp); port 0 picks a free port")
	tokenEnv := fs.String("token-env", "", "require the bearer token held in the environment variable `VAR` (needed for an address that is not loopback)")
	workspace := fs.String("workspace", "", "the directory the runtimes run in (default: the current directory)")
	hold := fs.Duration("hold", netserve.DefaultAbandonAfter, "how long a WebSocket or Streamable HTTP connection whose link dropped is held for its client to resume (the runtime goes on meanwhile)")
	retention := fs.Int("retention", netserve.DefaultRetention, "how many of a connection's latest messages are held for a client that resumes")
	logLevel := fs.String("log-level", "", "write structured logs to stderr at this level (debug, info, warn, error)")

	// The journal on disk (docs/behaviour.md#network).
	journalDir := fs.String("journal-dir", "", "also keep each connection's messages on disk in `DIR` (an existing directory), for a client that resumes after more than --retention messages")
	journalMax := fs.Int64("journal-max", netserve.DefaultJournalBytes, "bound each connection's journal on disk to `BYTES` (past it, the oldest half is removed)")

	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive serve --listen ADDR [--token-env VAR] -- COMMAND...")
		printDefaults(fs, w)
	}
	if err := parseFlags(fs, args, "serve", stdout, help); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "acpdrive serve: %v\n", err)
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "acpdrive serve: "+format+"\n", a...)
		return exitUsage
	}
	command := fs.Args()
	if *listen == "" {
		return fail("--listen ADDR is required")
	}
	if len(command) == 1 {
		words, err := domain.SplitHostCommandLine(command[0])
		if err != nil {
			return fail("the command: %v", err)
		}
		command = words
	}
	if *hold <= 0 || *retention <= 0 {
		return fail("--hold and --retention must be above zero")
	}
	if len(command) == 0 {
		return fail("no runtime command: acpdrive serve --listen ADDR -- COMMAND...")
	}

	// The journal on disk.
	if *journalMax <= 0 {
		return fail("--journal-max must be above zero")
	}

	token := ""
	if *tokenEnv != "" {
		if token = os.Getenv(*tokenEnv); token == "" {
			return fail("--token-env %s: the variable is unset or empty", *tokenEnv)
		}
	}
	dir := *workspace
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return fail("%v", err)
		}
	}
	logger := slog.New(slog.DiscardHandler)
	if *logLevel != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
			return fail("--log-level: %v", err)
		}
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	}
	srv, err := netserve.Listen(netserve.Options{
		Listen: *listen, Command: command, Workspace: dir, Token: token,
		Launcher: wiring.NewLocalLauncher(logger, localSettings()), Logger: logger,
		AbandonAfter: *hold, Retention: *retention,
		JournalDir: *journalDir, JournalBytes: *journalMax, // the journal on disk
	})
	if err != nil {
		return fail("%v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(stdout, srv.URL())
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "acpdrive serve: %v\n", err)
		return exitNoSession
	}
	return exitOK
}
