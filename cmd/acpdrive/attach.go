package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// attachCommand is "acpdrive attach REF [--json]": it reattaches to the
// held session REF names (printed by run --hold) and prints its running
// turn from the start the holder kept (or after the cursor REF names),
// then live, ending with the turn's turn_result; no prompt is sent
// (docs/behaviour.md#held-sessions).
func attachCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attach", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print JSON instead of human output")
	stall := fs.Duration("stall-timeout", domain.DefaultConfig().StallTimeout, "end the attach, leaving the session held, when no message came for this long (0 disables)")
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive attach REF [--json]")
		printDefaults(fs, w)
	}
	flagArgs, rest := splitArgs(fs, args)
	if err := parseFlags(fs, flagArgs, "attach", stdout, help); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "acpdrive attach: one REF is needed: acpdrive attach REF [--json]")
		return exitUsage
	}
	ref, err := parseHeldRef(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	token, err := os.ReadFile(ref.tokenFile)
	if err != nil {
		// The holder removes its directory when it ends: the session is gone.
		fmt.Fprintf(stderr, "acpdrive attach: %s: the held session is gone (its token cannot be read: %v)\n", domain.KindPortExit, err)
		return exitNoSession
	}
	const tokenName = "the held session's token file"
	l, err := netdial.New(netdial.Options{
		URL: ref.url, TokenEnv: tokenName,
		Getenv: func(string) string { return strings.TrimSpace(string(token)) },
		Resume: &netdial.Resume{Connection: ref.connection, Cursor: ref.cursor},
	})
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := newPrinter(*jsonOut, stdout, stderr)
	defer out.close()
	res, err := app.Attach(ctx, app.AttachOptions{
		Launcher: l, Workspace: wd, OnEvent: out.event, OnAgentText: out.text, StallTimeout: *stall,
	})
	if err != nil {
		var ae *domain.AgentError
		kind := domain.KindPortExit
		if errors.As(err, &ae) {
			kind = ae.Kind
		}
		fmt.Fprintf(stderr, "acpdrive attach: %s: %v\n", kind, err)
		return exitNoSession
	}
	out.turnResult(1, res, "")
	if res.Outcome == domain.OutcomeCompleted {
		return exitOK
	}
	return turnExit(res)
}
