package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// orphanPIDBound bounds a resumed batch's wait for the pid file of a
// holder whose directory its journal names but whose process id it had
// not recorded.
const orphanPIDBound = 2 * time.Second

// launchRecordedHolder starts a holder "acpdrive __holder" detached
// from this process (its own session) in a fresh directory holding its
// token (docs/behaviour.md#held-sessions), and reads the URL it listens
// at. A non-nil record is told the directory before the holder is
// started and its process id as soon as it is, so that a batch killed at
// any point leaves no holder its journal does not name
// (docs/behaviour.md#batch-journal). The token is in the directory only,
// never in this process's environment (a batch starts many; run's
// launchHolder puts it there for its dialer).
func launchRecordedHolder(ctx context.Context, command []string, workspace string, lease time.Duration, record func(dir string, pid int) error) (*held, error) {
	base, err := heldBase()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "h")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*held, error) { _ = os.RemoveAll(dir); return nil, err }
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, holdTokenFile), []byte(hex.EncodeToString(raw)), 0o600); err != nil {
		return fail(err)
	}
	if record == nil {
		record = func(string, int) error { return nil }
	}
	if err := record(dir, 0); err != nil {
		return fail(err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	args := []string{holderSubcommand, "--dir", dir, "--lease", lease.String(), "--workspace", workspace, "--"}
	cmd := exec.Command(self, append(args, command...)...)
	cmd.Dir = workspace
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, heldTokenEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = detachedAttr()
	logFile, err := os.OpenFile(filepath.Join(dir, "holder.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fail(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	kill := func(err error) (*held, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // closes the pipe: a reader ends
		return fail(err)
	}
	if err := record(dir, cmd.Process.Pid); err != nil {
		return kill(err)
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() { // ends with the holder's first line or its stdout's end
		s, err := bufio.NewReader(out).ReadString('\n')
		got <- line{strings.TrimSpace(s), err}
	}()
	t := time.NewTimer(holderStartBound)
	defer t.Stop()
	var l line
	read := false
	select {
	case l = <-got:
		read = true
	case <-t.C:
		l.err = errors.New("the holder printed no URL in time")
	case <-ctx.Done():
		l.err = ctx.Err()
	}
	if l.err != nil || !strings.HasPrefix(l.s, "http://") {
		if l.err == nil {
			l.err = fmt.Errorf("the holder printed %q, not its URL", l.s)
		}
		h, err := kill(l.err)
		if !read {
			<-got // the wait closed the pipe: the reader ended
		}
		return h, err
	}
	return &held{dir: dir, url: "ws://" + strings.TrimPrefix(l.s, "http://"), cmd: cmd}, nil
}

// releaseHolder ends the holder a record names, when it still runs (its
// session holds no turn the batch will follow), and waits, bounded, for
// it to end. A holder whose process id the record lacks is found by its
// directory's pid file; a directory no holder came to is removed.
func releaseHolder(rec journalTask) {
	if rec.HolderDir == "" {
		return
	}
	pid := rec.HolderPID
	for deadline := time.Now().Add(orphanPIDBound); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(rec.HolderDir, holdPIDFile))
		if errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(rec.HolderDir); errors.Is(err, fs.ErrNotExist) {
				return // the holder ended and removed it
			}
			continue
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid <= 0 || !holderAlive(pid, rec.HolderDir) {
		if pid <= 0 {
			_ = os.RemoveAll(rec.HolderDir) // no holder came to it
		}
		return
	}
	_ = terminateHolder(pid)
	for deadline := time.Now().Add(heldAttachBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(rec.HolderDir); errors.Is(err, fs.ErrNotExist) || !holderAlive(pid, rec.HolderDir) {
			return
		}
	}
}
