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

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

func probeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: acpdrive probe [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acpdrive probe: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	cfg, logger, workspace, err := f.resolve(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive probe: %v\n", err)
		return exitUsage
	}
	deps, err := wiring.Resolve(logger, localSettings())
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive probe: %v\n", err)
		return exitUsage
	}
	opts := app.Options{Settings: settingsOf(cfg), Workspace: workspace}
	deps.Apply(&opts)
	f.applyLauncher(&opts, cfg, logger)
	report, err := app.Probe(ctx, opts)
	if err != nil {
		out := newPrinter(f.json, stdout, stderr)
		out.startupFailed(err)
		out.close()
		return exitNoSession
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(report)
		return exitOK
	}
	printProbe(stdout, report)
	return exitOK
}

func printProbe(w io.Writer, r app.ProbeReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	agent := "(no agentInfo)"
	if r.AgentInfo != nil {
		agent = strings.TrimSpace(r.AgentInfo.Name + " " + r.AgentInfo.Version)
		if r.AgentInfo.Title != "" {
			agent += " (" + r.AgentInfo.Title + ")"
		}
	}
	row("agent", agent)
	row("protocol version", fmt.Sprint(r.ProtocolVersion))
	row("load session", yesNo(r.LoadSession))
	row("session capabilities", listOrNone(r.SessionCapabilities))
	row("prompt capabilities", fmt.Sprintf("image=%s audio=%s embeddedContext=%s",
		yesNo(r.PromptCapabilities.Image), yesNo(r.PromptCapabilities.Audio), yesNo(r.PromptCapabilities.EmbeddedContext)))
	row("mcp capabilities", fmt.Sprintf("stdio=yes http=%s sse=%s", yesNo(r.MCPCapabilities.HTTP), yesNo(r.MCPCapabilities.SSE)))
	var auth []string
	for _, m := range r.AuthMethods {
		auth = append(auth, m.ID)
	}
	row("auth methods", listOrNone(auth))
	row("negative control", describeControl(r.NegativeControl))
	route := r.ContinuationRoute
	if route == "" {
		route = "none (session/new only)"
	}
	row("continuation route", route)
	teardown := r.TeardownMethod
	if teardown == "" {
		teardown = "process termination only"
	}
	row("teardown", teardown)
	row("measurement (claim)", orNone(r.ClaimedBy))
	row("measurement (handshake)", orNone(r.MeasuredBy))
	if r.ToolServers != nil {
		row("tool servers (confirmation)", toolServersText(r.ToolServers))
	}
	for _, label := range domain.CapabilityOrder {
		state := string(r.Capabilities.State(label))
		if r.Capabilities.Confirmed(label) {
			state += " (confirmed)"
		}
		row("capability: "+string(label), state)
	}
	_ = tw.Flush()
}

func describeControl(c app.NegativeControl) string {
	switch {
	case c.Code != nil:
		return fmt.Sprintf("error %d %q", *c.Code, c.Message)
	case c.Result:
		return "answered with a result (not an error)"
	case c.Failure != "":
		return "unanswered: " + c.Failure
	}
	return "not sent"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
