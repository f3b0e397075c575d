package main

import (
	"errors"
	"flag"
	"log/slog"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// urlFlags are the flags of a runtime at a URL (docs/behaviour.md#network).
type urlFlags struct {
	url      string
	tokenEnv string
	caFile   string
}

// register defines --url, --token-env and --ca-file on fs.
func (u *urlFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&u.url, "url", "", "reach a runtime already listening at `URL` instead of launching one: tcp://HOST:PORT, unix:PATH, ws://HOST:PORT/acp, wss://…, http://HOST:PORT/acp or https://… (Streamable HTTP) (agent.url)")
	fs.StringVar(&u.tokenEnv, "token-env", "", "send the bearer token held in the environment variable `VAR` to the --url runtime (agent.token_env; never a flag value)")
	fs.StringVar(&u.caFile, "ca-file", "", "check a wss:// or https:// server against the certificate authorities of this PEM `FILE` (default: the system's)")
}

// applyURL puts the network launcher into opts when a URL is given (the
// flag, else agent.url) and reports whether it did. The command is not
// run: the settings' command becomes the URL, which the logs and the
// start-up report name. A URL given with --command or SSH hosts, or one
// the launcher refuses, makes a launcher whose Prepare refuses the start
// with the reason (configuration_invalid, exit 2).
func (f runFlags) applyURL(opts *app.Options, cfg domain.Config, logger *slog.Logger) bool {
	u := f.session.url
	url, tokenEnv := u.url, u.tokenEnv
	if url == "" {
		url = cfg.URL
	}
	if tokenEnv == "" {
		tokenEnv = cfg.TokenEnv
	}
	if url == "" {
		return false
	}
	opts.Settings.Command = []string{url}
	// Without --workspace, the workspace the server announces, else the
	// current directory (docs/behaviour.md#network).
	opts.ServerWorkspace = f.workspace == ""
	ns := wiring.NetworkSettings{URL: url, TokenEnv: tokenEnv, CAFile: u.caFile}
	switch {
	case f.set["command"]:
		ns.Refuse = configInvalid(errorString("--url and --command are exclusive: a runtime at a URL is not launched"))
	case cfg.Remote():
		ns.Refuse = configInvalid(errorString("--url and SSH hosts are exclusive: a runtime at a URL is not launched"))
	}
	opts.Launcher = wiring.NewNetworkLauncher(logger, ns)
	return true
}

// errorString is an error of fixed words.
type errorString string

func (e errorString) Error() string { return string(e) }

// checkURLInvalid is the finding of an agent.url the dialer refuses.
const checkURLInvalid = "agent.url.invalid"

// urlFindings checks agent.url as the dialer reads it, for validate
// (docs/behaviour.md#network): nothing when it is unset or dialable.
func urlFindings(cfg domain.Config) []domain.Finding {
	if cfg.URL == "" {
		return nil
	}
	if _, err := netdial.New(netdial.Options{URL: cfg.URL}); err != nil {
		msg := err.Error()
		var ae *domain.AgentError
		if errors.As(err, &ae) {
			msg = ae.Message
		}
		return []domain.Finding{{Severity: domain.SeverityError, Check: checkURLInvalid, Message: "agent.url: " + msg}}
	}
	return nil
}
