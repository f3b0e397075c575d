package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// releaseBound bounds release's wait for the holder to end its session
// (serve's own teardown bound is 10 s).
const releaseBound = 15 * time.Second

// heldEntry is one held session as acpdrive held lists it.
type heldEntry struct {
	SessionRef string `json:"session_ref,omitempty"`
	PID        int    `json:"pid"`
	State      string `json:"state"` // "held" once a connection was made, "starting" before
	// What the holder recorded (docs/behaviour.md#held-sessions).
	Runtime        []string `json:"runtime,omitempty"`
	Host           string   `json:"host,omitempty"`
	Turn           string   `json:"turn,omitempty"`
	IdleMS         *int64   `json:"idle_ms,omitempty"`
	LastStopReason string   `json:"last_stop_reason,omitempty"`
	dir            string
}

// heldEntries reads the holders' directories of this user; a directory
// whose holder is not running is left out.
func heldEntries() ([]heldEntry, error) {
	base, err := heldBase()
	if err != nil {
		return nil, err
	}
	dirs, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	var out []heldEntry
	for _, d := range dirs {
		dir := filepath.Join(base, d.Name())
		e, ok := readHeld(dir)
		if ok {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, nil
}

// readHeld reads one holder's directory; false when its holder is not
// running. The directory a holder that was killed left (its pid file
// names no running holder of it) is removed.
func readHeld(dir string) (heldEntry, bool) {
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.TrimSpace(string(b))
	}
	pid, err := strconv.Atoi(read(holdPIDFile))
	if err != nil {
		return heldEntry{}, false // not started yet, or not a holder's
	}
	if !holderAlive(pid, dir) {
		if holdersListed {
			_ = os.RemoveAll(dir)
		}
		return heldEntry{}, false
	}
	e := heldEntry{PID: pid, State: "starting", dir: dir}
	if conn, url := read(holdConnFile), read(holdURLFile); conn != "" && strings.HasPrefix(url, "http://") {
		h := &held{dir: dir, url: "ws://" + strings.TrimPrefix(url, "http://")}
		e.SessionRef, e.State = h.reference(), "held"
	}
	var st holdStatus
	if b, err := os.ReadFile(filepath.Join(dir, holdStatusFile)); err == nil && json.Unmarshal(b, &st) == nil {
		e.Runtime, e.Host, e.Turn, e.LastStopReason = st.Runtime, st.Host, st.Turn, st.LastStopReason
		if st.Turn == turnIdle {
			idle := time.Since(st.Since).Milliseconds()
			e.IdleMS = &idle
		}
	}
	return e, true
}

// line is the entry as held prints it: state, reference, pid, host,
// turn, last stop reason, runtime (docs/behaviour.md#held-sessions).
func (e heldEntry) line() string {
	ref := e.SessionRef
	if ref == "" {
		ref = "(no connection yet)"
	}
	host := e.Host
	if host == "" {
		host = "local"
	}
	turn := "no turn yet"
	switch {
	case e.Turn == turnIdle && e.IdleMS != nil:
		turn = "idle " + (time.Duration(*e.IdleMS) * time.Millisecond).Round(time.Second).String()
	case e.Turn != "":
		turn = e.Turn
	}
	last := e.LastStopReason
	if last == "" {
		last = "-"
	}
	return fmt.Sprintf("%s  %s  pid %d  host %s  %s  last %s  runtime %s", e.State, ref, e.PID, host, turn, last, strings.Join(e.Runtime, " "))
}

// heldCommand is "acpdrive held [--json]": the user's held sessions,
// one a line (docs/behaviour.md#held-sessions).
func heldCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("held", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print one JSON object a line")
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive held [--json]")
		printDefaults(fs, w)
	}
	if err := parseFlags(fs, args, "held", stdout, help); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "acpdrive held: %v\n", err)
		return exitUsage
	}
	entries, err := heldEntries()
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive held: %v\n", err)
		return exitNoSession
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if *jsonOut {
			_ = enc.Encode(e)
			continue
		}
		fmt.Fprintln(stdout, e.line())
	}
	return exitOK
}

// releaseCommand is "acpdrive release REF": the holder of REF ends the
// session with serve's bounded teardown and exits
// (docs/behaviour.md#held-sessions).
func releaseCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive release REF")
		printDefaults(fs, w)
	}
	if err := parseFlags(fs, args, "release", stdout, help); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "acpdrive release: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "acpdrive release: one REF is needed: acpdrive release REF")
		return exitUsage
	}
	ref, err := parseHeldRef(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive release: %v\n", err)
		return exitUsage
	}
	dir := filepath.Dir(ref.tokenFile)
	e, ok := readHeld(dir)
	var held heldRef
	if ok && e.SessionRef != "" {
		held, _ = parseHeldRef(e.SessionRef)
	}
	if held.url != ref.url || held.connection != ref.connection {
		fmt.Fprintf(stderr, "acpdrive release: %s: the held session is gone\n", domain.KindPortExit)
		return exitNoSession
	}
	if err := terminateHolder(e.PID); err != nil {
		fmt.Fprintf(stderr, "acpdrive release: %v\n", err)
		return exitNoSession
	}
	deadline := time.Now().Add(releaseBound)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return exitOK
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(stderr, "acpdrive release: the holder (pid %d) did not end within %s\n", e.PID, releaseBound)
	return exitNoSession
}
