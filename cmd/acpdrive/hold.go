package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// holderSubcommand is the hidden subcommand a held run starts its holder
// with (docs/behaviour.md#held-sessions).
const holderSubcommand = "__holder"

// defaultHoldLease is how long a held session is kept with no client
// attached (--hold-lease).
const defaultHoldLease = 10 * time.Minute

// holderStartBound bounds the wait for the holder's URL.
const holderStartBound = 30 * time.Second

// holderExitBound bounds run's wait, at its end, for the holder it
// started to exit (it exits at once when the run closed its connection).
const holderExitBound = 5 * time.Second

// The files of a holder's directory.
const (
	holdTokenFile = "token"      // the bearer token, 0600
	holdConnFile  = "connection" // the connection id, once made
	holdURLFile   = "url"        // the URL the holder listens at (http://)
	holdPIDFile   = "pid"        // the holder's process id
	// holdPromptsFile is the run's prompts, in order (a JSON array of
	// strings, 0600), written before the first is sent: attach sends those
	// the killed run had not sent (docs/behaviour.md#held-sessions).
	holdPromptsFile = "prompts"
)

// heldTokenEnv is the variable run's own dialer reads the holder's token
// from (set in run's process only; the holder does not inherit it).
const heldTokenEnv = "ACPDRIVE_HELD_TOKEN"

// holdFlags are run's --hold and --hold-lease.
type holdFlags struct {
	hold  bool
	lease time.Duration
}

// register defines --hold and --hold-lease on fs.
func (h *holdFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&h.hold, "hold", false, "run the session through a holder process that outlives this one: a killed run loses no turn, acpdrive attach REF continues it (docs/behaviour.md#held-sessions)")
	fs.DurationVar(&h.lease, "hold-lease", defaultHoldLease, "how long a held session is kept with no client attached before its runtime is stopped")
}

// held is the holder a held run started.
type held struct {
	dir string
	url string // the WebSocket URL
	cmd *exec.Cmd

	mu  sync.Mutex
	ref string
}

// heldBase is the directory holders' directories are made in: the
// user's runtime directory, else a 0700 directory of the user's under
// the temporary directory.
func heldBase() (string, error) {
	base := ""
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		base = filepath.Join(d, "acpdrive")
	} else {
		base = filepath.Join(os.TempDir(), "acpdrive-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ownedByMe(fi) {
		return "", fmt.Errorf("%s is not a directory of this user's alone (0700)", base)
	}
	return base, nil
}

// startHeld starts the holder for a --hold run and points opts at it:
// the network launcher over a resumable WebSocket, the session_started
// event carrying the reference. The run's prompts are written into the
// holder's directory. Nil (and nothing changed) without --hold.
func (f runFlags) startHeld(ctx context.Context, opts *app.Options, cfg domain.Config, logger *slog.Logger, stderr io.Writer, prompts []string) (*held, error) {
	if !f.hold.hold {
		return nil, nil
	}
	switch {
	case f.session.url.url != "" || cfg.URL != "":
		return nil, configInvalid(errorString("--hold and --url are exclusive: a runtime at a URL is held by its server"))
	case cfg.Remote():
		return nil, configInvalid(errorString("--hold over SSH is not built yet: hold a local runtime"))
	case f.hold.lease <= 0:
		return nil, configInvalid(errorString("--hold-lease must be above zero"))
	}
	// The program and the workspace are checked here, as a local start
	// checks them, before a holder is started for them.
	if err := app.CheckLaunch(opts.Launcher, opts.Settings.Command, opts.Workspace); err != nil {
		return nil, err
	}
	h, err := launchHolder(ctx, opts.Settings.Command, opts.Workspace, f.hold.lease)
	if err != nil {
		return nil, domain.WrapError(domain.KindPortExit, "the holder could not be started", err)
	}
	if err := writePrompts(h.dir, prompts); err != nil {
		_ = h.cmd.Process.Signal(syscall.SIGTERM) // no connection will come: it holds nothing
		_ = h.cmd.Process.Release()
		return nil, domain.WrapError(domain.KindPortExit, "the holder's directory could not take the prompts", err)
	}
	opts.Settings.Command = []string{h.url}
	opts.Launcher = wiring.NewNetworkLauncher(logger, wiring.NetworkSettings{URL: h.url, TokenEnv: heldTokenEnv})
	onEvent := opts.OnEvent
	opts.OnEvent = func(ev domain.Event) {
		if ev.Type == domain.EventSessionStarted && ev.ParentSessionID == "" {
			ev.SessionRef = h.reference()
			if !f.json && !f.quiet {
				fmt.Fprintf(stderr, "acpdrive run: held as %s (acpdrive attach REF continues it)\n", ev.SessionRef)
			}
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	return h, nil
}

// writePrompts writes the run's prompts into the holder's directory
// (0600), whole or not at all.
func writePrompts(dir string, prompts []string) error {
	raw, err := json.Marshal(prompts)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, holdPromptsFile+".new")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, holdPromptsFile))
}

// readPrompts reads the prompts a held run wrote into dir; none when it
// wrote none.
func readPrompts(dir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, holdPromptsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var prompts []string
	if err := json.Unmarshal(raw, &prompts); err != nil {
		return nil, fmt.Errorf("the held run's prompts: %w", err)
	}
	return prompts, nil
}

// launchHolder starts "acpdrive __holder" detached from this process
// (its own session), in a fresh directory holding its token, and reads
// the URL it listens at (launchRecordedHolder, recording nothing); run's
// own dialer reads the token from heldTokenEnv, which the holder does
// not inherit.
func launchHolder(ctx context.Context, command []string, workspace string, lease time.Duration) (*held, error) {
	h, err := launchRecordedHolder(ctx, command, workspace, lease, nil)
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(h.dir, holdTokenFile))
	if err == nil {
		err = os.Setenv(heldTokenEnv, string(token))
	}
	if err != nil {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
		_ = os.RemoveAll(h.dir)
		return nil, err
	}
	return h, nil
}

// reference is the held session's reference: the WebSocket URL, its
// fragment naming the connection and the token's file (never the token).
func (h *held) reference() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ref == "" {
		conn, _ := os.ReadFile(filepath.Join(h.dir, holdConnFile))
		v := url.Values{}
		v.Set("connection", strings.TrimSpace(string(conn)))
		v.Set("token_file", filepath.Join(h.dir, holdTokenFile))
		h.ref = h.url + "#" + v.Encode()
	}
	return h.ref
}

// close waits, bounded, for the holder to end (it does once the run
// closed its connection), and leaves it running otherwise; a holder no
// connection reached (the start failed before it) is ended at once.
func (h *held) close() {
	if h == nil {
		return
	}
	if _, err := os.Stat(filepath.Join(h.dir, holdConnFile)); errors.Is(err, fs.ErrNotExist) {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
	}
	// The holder removes its directory as it exits; the wait is on that
	// (a Wait would outlive the bound).
	for deadline := time.Now().Add(holderExitBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(h.dir); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	_ = h.cmd.Process.Release()
}

// heldRef is a parsed session reference.
type heldRef struct {
	url, connection, tokenFile, cursor string
}

// parseHeldRef reads a reference run --hold printed (a cursor may be
// added to its fragment: cursor=N resumes after message N).
func parseHeldRef(ref string) (heldRef, error) {
	u, frag, ok := strings.Cut(ref, "#")
	if !ok || !strings.HasPrefix(u, "ws://") {
		return heldRef{}, fmt.Errorf("%q is not a held session's reference (ws://HOST:PORT/acp#connection=…&token_file=…)", ref)
	}
	v, err := url.ParseQuery(frag)
	if err != nil {
		return heldRef{}, fmt.Errorf("the reference's fragment: %w", err)
	}
	r := heldRef{url: u, connection: v.Get("connection"), tokenFile: v.Get("token_file"), cursor: v.Get("cursor")}
	if r.connection == "" || r.tokenFile == "" {
		return heldRef{}, fmt.Errorf("%q names no connection or token file", ref)
	}
	return r, nil
}

// holderCommand is the hidden "acpdrive __holder --dir DIR --lease D
// --workspace W -- COMMAND...": acpdrive serve on loopback for one held
// session, with the token of DIR, writing the connection's id into DIR
// once made, and exiting (DIR removed) once it holds nothing: its
// connection ended, or none came within the lease
// (docs/behaviour.md#held-sessions).
func holderCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(holderSubcommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the holder's directory")
	lease := fs.Duration("lease", defaultHoldLease, "how long the session is held with no client")
	workspace := fs.String("workspace", "", "the runtime's directory")
	if err := fs.Parse(args); err != nil || *dir == "" || *lease <= 0 || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "acpdrive __holder: usage: __holder --dir DIR --lease D --workspace W -- COMMAND...")
		return exitUsage
	}
	defer os.RemoveAll(*dir)
	token, err := os.ReadFile(filepath.Join(*dir, holdTokenFile))
	if err != nil || len(token) == 0 {
		fmt.Fprintf(stderr, "acpdrive __holder: the token: %v\n", err)
		return exitUsage
	}
	return holdServe(ctx, holdServeArgs{
		dir: *dir, lease: *lease, workspace: *workspace, token: string(token), command: fs.Args(),
	}, stdout, stderr)
}
