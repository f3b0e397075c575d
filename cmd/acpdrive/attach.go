package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// attachCommand is "acpdrive attach REF [--json] [--permissions P]
// [--answers FILE]": it reattaches to the held session REF names (printed
// by run --hold) and completes its run: the turn under way, then the
// prompts the earlier client had not sent, each once, answering with its
// policies the requests left unanswered; it prints the run's turns from
// the start the holder kept, then live, and ends with run_result
// (docs/behaviour.md#held-sessions).
func attachCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attach", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print JSON instead of human output")
	stall := fs.Duration("stall-timeout", domain.DefaultConfig().StallTimeout, "end the attach, leaving the session held, when no message came for this long (0 disables)")
	perms := fs.String("permissions", string(domain.PresetRefuse), "how the permission requests the earlier client left unanswered are answered: refuse, read, edit or rules:FILE (as run's)")
	answers := fs.String("answers", "", "answer the questions the earlier client left unanswered from the answers `FILE` (as run's)")
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive attach REF [--json] [--permissions P] [--answers FILE]")
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
		fmt.Fprintln(stderr, "acpdrive attach: one REF is needed: acpdrive attach REF [--json] [--permissions P] [--answers FILE]")
		return exitUsage
	}
	ref, err := parseHeldRef(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	policy, err := permissionsFlag(*perms)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive attach: %v\n", err)
		return exitUsage
	}
	var cfg domain.Config
	if err := answersFlag(&cfg, *answers); err != nil {
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
	// The run's prompts are where its token is; after a cursor the held
	// messages are not all read, so only the turn under way is followed.
	prompts, err := readPrompts(filepath.Dir(ref.tokenFile))
	if err != nil || ref.cursor != "" {
		prompts = nil
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := newPrinter(*jsonOut, stdout, stderr)
	defer out.close()
	code := exitOK
	onEvent := func(ev domain.Event) {
		if ev.Type == domain.EventSessionStarted {
			ev.SessionRef = rest[0] // as a held run's (docs/behaviour.md#held-sessions)
		}
		out.event(ev)
	}
	opts := app.AttachOptions{
		Launcher: l, Workspace: wd, OnEvent: onEvent, OnAgentText: out.text, StallTimeout: *stall,
		Prompts: prompts, PermissionPolicy: policy,
		OnTurn: func(n int, res domain.TurnResult) {
			out.turnResult(n, res, "")
			if res.Outcome != domain.OutcomeCompleted {
				code = turnExit(res)
			}
		},
	}
	if cfg.Answers != nil {
		opts.Answers = *cfg.Answers
	}
	run, err := app.Attach(ctx, opts)
	if err != nil {
		var ae *domain.AgentError
		kind := domain.KindPortExit
		if errors.As(err, &ae) {
			kind = ae.Kind
		}
		fmt.Fprintf(stderr, "acpdrive attach: %s: %v\n", kind, err)
		return exitNoSession
	}
	out.heldRunResult(run)
	return code
}
