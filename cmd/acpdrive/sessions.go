package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// sessionListLine is the JSON answer of `sessions list --json`.
type sessionListLine struct {
	Type     string             `json:"type"`
	Sessions []app.SessionEntry `json:"sessions"`
}

// sessionDeletedLine is the JSON answer of `sessions delete --json`.
type sessionDeletedLine struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
}

// sessionsFailedLine is the JSON line of a sessions call that failed
// after the runtime started.
type sessionsFailedLine struct {
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	ErrorKind string    `json:"error_kind"`
	Message   string    `json:"message"`
	// Reason is startup_failed's reason.
	Reason string `json:"reason,omitempty"`
}

// sessionsCommand serves `acpdrive sessions list|delete`: the sessions a
// runtime keeps, as resources
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
func sessionsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "delete") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			sessionsUsage(stdout)
			return exitOK
		}
		sessionsUsage(stderr)
		return exitUsage
	}
	sub := args[0]
	var f runFlags
	fs := flag.NewFlagSet("sessions "+sub, flag.ContinueOnError)
	f.register(fs)
	help := func(w io.Writer) {
		if sub == "list" {
			fmt.Fprintln(w, "usage: acpdrive sessions list [flags]   (--workspace DIR lists only that directory's sessions)")
		} else {
			fmt.Fprintln(w, "usage: acpdrive sessions delete [flags] ID")
		}
		printDefaults(fs, w)
	}
	flagArgs, rest := splitArgs(fs, args[1:])
	err := parseFlags(fs, flagArgs, "sessions "+sub, stdout, help)
	if err == nil {
		err = f.check("sessions " + sub)
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive sessions %s: %v\n", sub, err)
		return exitUsage
	}
	rest = append(rest, fs.Args()...)
	filtered := false
	fs.Visit(func(fl *flag.Flag) { filtered = filtered || fl.Name == "workspace" })
	var id string
	switch {
	case sub == "list" && len(rest) > 0:
		fmt.Fprintf(stderr, "acpdrive sessions list: unexpected argument %q\n", rest[0])
		return exitUsage
	case sub == "delete" && len(rest) != 1:
		fmt.Fprintln(stderr, "acpdrive sessions delete: exactly one session ID is required")
		return exitUsage
	case sub == "delete":
		if id = rest[0]; strings.TrimSpace(id) == "" {
			fmt.Fprintln(stderr, "acpdrive sessions delete: the session ID is empty")
			return exitUsage
		}
	}
	cfg, logger, workspace, err := f.resolve(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive sessions %s: %v\n", sub, err)
		return exitUsage
	}
	deps, err := wiring.Resolve(logger, localSettings())
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive sessions %s: %v\n", sub, err)
		return exitUsage
	}
	opts := app.Options{Settings: f.settings(cfg), Workspace: workspace}
	deps.Apply(&opts)
	f.applyLauncher(&opts, cfg, logger)
	store, err := app.OpenSessionStore(ctx, opts)
	if err != nil {
		out := newPrinter(f.json, stdout, stderr)
		out.startupFailed(err, opts.Settings)
		out.close()
		return exitNoSession
	}
	var entries []app.SessionEntry
	if sub == "list" {
		cwd := ""
		if filtered {
			cwd = workspace
		}
		entries, err = store.List(ctx, cwd)
	} else {
		err = store.Delete(ctx, id)
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
	defer cancel()
	if stopErr := store.Stop(stopCtx); stopErr != nil && logger != nil {
		logger.Warn("teardown reported", "error", stopErr)
	}
	if err != nil {
		sessionsFailed(f.json, sub, err, stdout, stderr)
		return exitNoSession
	}
	if sub == "delete" {
		if f.json {
			writeJSON(stdout, sessionDeletedLine{Type: "session_deleted", SessionID: id})
		} else {
			fmt.Fprintf(stdout, "deleted session %s\n", id)
		}
		return exitOK
	}
	if f.json {
		writeJSON(stdout, sessionListLine{Type: "session_list", Sessions: entries})
		return exitOK
	}
	printSessions(stdout, entries)
	return exitOK
}

func sessionsUsage(w io.Writer) {
	fmt.Fprint(w, `usage:
  acpdrive sessions list [flags]        list the sessions the runtime keeps (every page; --workspace DIR: that directory's only)
  acpdrive sessions delete [flags] ID   delete one session from the runtime's list

Both take the launch flags of "acpdrive probe" (--command, --workspace, --json, …).
`)
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// sessionsFailed reports a sessions call that failed after the start: a
// JSON line on stdout, or one line on stderr for a person.
func sessionsFailed(jsonOut bool, sub string, err error, stdout, stderr io.Writer) {
	kind, msg := "", err.Error()
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		kind, msg = string(ae.Kind), ae.Error()
	}
	if jsonOut {
		writeJSON(stdout, sessionsFailedLine{Type: "sessions_failed", Time: time.Now().UTC(), ErrorKind: kind, Message: msg, Reason: string(notFoundReason(err))})
		return
	}
	fmt.Fprintf(stderr, "acpdrive sessions %s: %s\n", sub, withReason(err, err.Error()))
}

// printSessions is the human listing: one row per session, in the
// runtime's order.
func printSessions(w io.Writer, entries []app.SessionEntry) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tUPDATED\tTITLE\tCWD")
	for _, e := range entries {
		title := e.Title
		if title == "" {
			title = "-"
		}
		updated := e.UpdatedAt
		if updated == "" {
			updated = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, updated, strings.Join(strings.Fields(title), " "), e.CWD)
	}
	_ = tw.Flush()
}
