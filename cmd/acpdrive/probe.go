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
	f.register(fs)
	f.session.url.register(fs)
	withSession := fs.Bool("session", false, "also create a throwaway session (deleted or closed after) to show its modes, configuration options, models and commands")
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive probe [flags]")
		printDefaults(fs, w)
	}
	if err := parseFlags(fs, args, "probe", stdout, help); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "acpdrive probe: %v\n", err)
		return exitUsage
	}
	if err := f.check("probe"); err != nil {
		fmt.Fprintf(stderr, "acpdrive probe: %v\n", err)
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
	opts := app.Options{Settings: f.settings(cfg), Workspace: workspace}
	deps.Apply(&opts)
	f.applyLauncher(&opts, cfg, logger)
	err = checkAdditionalDirectories(cfg)
	var report app.ProbeReport
	if err == nil {
		report, err = app.Probe(ctx, opts, app.ProbeOptions{Session: *withSession})
	}
	if err != nil {
		out := newPrinter(f.json, stdout, stderr)
		out.startupFailed(err, opts.Settings)
		out.close()
		return exitNoSession
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(probeLine{ProbeReport: report, ContinuationRoute: continuationRouteText(report.ContinuationRoute)})
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
	var sessionCaps []string
	for _, k := range r.SessionCapabilities {
		if v, ok := r.SessionCapabilityValues[k]; ok {
			k += " " + v
		}
		sessionCaps = append(sessionCaps, k)
	}
	row("session capabilities", listOrNone(sessionCaps))
	row("prompt capabilities", fmt.Sprintf("image=%s audio=%s embeddedContext=%s",
		yesNo(r.PromptCapabilities.Image), yesNo(r.PromptCapabilities.Audio), yesNo(r.PromptCapabilities.EmbeddedContext)))
	row("mcp capabilities", fmt.Sprintf("stdio=yes http=%s sse=%s", yesNo(r.MCPCapabilities.HTTP), yesNo(r.MCPCapabilities.SSE)))
	var auth []string
	for _, m := range r.AuthMethods {
		a := m.ID
		if m.Name != "" && m.Name != m.ID {
			a += " (" + m.Name + ")"
		}
		auth = append(auth, a)
	}
	row("auth methods", listOrNone(auth))
	row("auth capabilities", listOrNone(r.AuthCapabilities))
	providers := "not advertised"
	if r.Providers != nil {
		providers = "advertised"
		if len(r.Providers) > 0 {
			providers += ": " + strings.Join(r.Providers, ", ")
		}
	}
	row("providers", providers)
	row("_meta keys", listOrNone(r.MetaKeys))
	if len(r.ResultMetaKeys) > 0 {
		row("initialize _meta keys", listOrNone(r.ResultMetaKeys))
	}
	row("steering", advertisedText(r.Steering))
	row("negative control", describeControl(r.NegativeControl))
	row("continuation route", continuationRouteText(r.ContinuationRoute))
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
	if ps := r.Session; ps != nil {
		printProbeSession(row, ps)
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

// printProbeSession renders what the throwaway session showed.
func printProbeSession(row func(k, v string), ps *app.ProbeSession) {
	var modes []string
	for _, m := range ps.Modes {
		t := m.ID
		if m.Name != "" && m.Name != m.ID {
			t += " (" + m.Name + ")"
		}
		if m.ID == ps.CurrentMode {
			t += " [current]"
		}
		modes = append(modes, t)
	}
	if len(modes) == 0 && ps.CurrentMode != "" {
		modes = append(modes, ps.CurrentMode+" [current]")
	}
	row("session: modes", listOrNone(modes))
	var opts []string
	for _, o := range ps.ConfigOptions {
		t := o.ID + "=" + o.Value
		if len(o.Values) > 0 {
			t += " {" + strings.Join(o.Values, "|") + "}"
		}
		opts = append(opts, t)
	}
	row("session: config options", listOrNone(opts))
	var models []string
	for _, m := range ps.Models {
		t := m.ID
		if m.ID == ps.CurrentModel {
			t += " [current]"
		}
		models = append(models, t)
	}
	row("session: models", listOrNone(models))
	var cmds []string
	for _, c := range ps.Commands {
		cmds = append(cmds, "/"+c.Name)
	}
	row("session: commands", listOrNone(cmds))
	ended := ps.EndedWith
	if ended == "" {
		ended = "process termination"
	}
	row("session: ended with", ended)
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

// probeLine is probe's --json object: the report, its continuation route
// said the way the human output says it.
type probeLine struct {
	app.ProbeReport
	// ContinuationRoute is session/load, session/resume, or
	// "none (session/new only)" (docs/behaviour.md#probe-what-the-runtime-advertises).
	ContinuationRoute string `json:"continuation_route"`
}

// continuationRouteText names the continuation route for a person and
// for --json alike.
func continuationRouteText(route string) string {
	if route == "" {
		return "none (session/new only)"
	}
	return route
}
