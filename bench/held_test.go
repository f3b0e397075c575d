//go:build linux

package bench

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// heldScript is the held benchmarks' turn: a first chunk (the run is
// killed on it), then, a little later, the chunks the killed run misses
// and the answer.
const heldScript = `{"defaultTurn":"t","turns":{"t":{"steps":[
{"step":"text","text":"one "},{"step":"sleep","ms":300},
{"step":"text","text":"two "},{"step":"text","text":"three "},{"step":"text","text":"four"},
{"step":"stop","stopReason":"end_turn"}]}}}`

// heldSession is a held session whose run was SIGKILLed on its turn's
// first chunk and whose turn then ended in its holder: idle, no client
// attached.
type heldSession struct {
	ref       string
	dir       string // the holder's directory
	holderPID int
}

// startIdleHeld starts run --hold on heldScript under runtimeDir, kills
// the run on its first chunk and waits until the holder recorded the
// turn's end (docs/behaviour.md#held-sessions).
func startIdleHeld(b *testing.B, runtimeDir, script string) heldSession {
	b.Helper()
	cmd := exec.Command(agentBin, "run", "--hold", "--hold-lease", "10m", "--json",
		"--command", agentBin+" agent --script "+script, "go")
	cmd.Dir = workspace
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	ref := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), `"message_chunk"`) {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["session_ref"] != nil {
			ref, _ = m["session_ref"].(string)
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if ref == "" {
		b.Fatal("the held run printed no session_ref")
	}
	_, frag, _ := strings.Cut(ref, "#")
	v, _ := url.ParseQuery(frag)
	dir := filepath.Dir(v.Get("token_file"))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var st struct {
			Turn string `json:"turn"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "status")); err == nil && json.Unmarshal(b, &st) == nil && st.Turn == "idle" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the held turn did not end")
		}
	}
	pidText, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		b.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	return heldSession{ref: ref, dir: dir, holderPID: pid}
}

// release ends a held session and waits for its holder.
func (h heldSession) release(b *testing.B, runtimeDir string) {
	b.Helper()
	cmd := exec.Command(agentBin, "release", h.ref)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "is gone") {
		b.Errorf("release: %v: %s", err, out)
	}
}

// heldFixture is a runtime directory and the held script's file.
func heldFixture(b *testing.B) (runtimeDir, script string) {
	b.Helper()
	dir, err := os.MkdirTemp("", "hb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	script = filepath.Join(dir, "held.json")
	if err := os.WriteFile(script, []byte(heldScript), 0o600); err != nil {
		b.Fatal(err)
	}
	runtimeDir = filepath.Join(dir, "rt")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		b.Fatal(err)
	}
	return runtimeDir, script
}

// smapsRollup is one field of /proc/PID/smaps_rollup in bytes; -1 when
// it cannot be read.
func smapsRollup(pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			return -1
		}
		v, _ := strconv.ParseInt(f[0], 10, 64)
		return v * 1024
	}
	return -1
}

// BenchmarkHeldIdleSession holds N idle held sessions at once (each a
// run --hold killed mid-turn whose turn then ended in its holder, no
// client attached) and reports what one costs its holder, a process
// per session: RSS, the memory it alone holds (private pages, from
// smaps_rollup; the binary's shared pages are counted once for all
// holders), PSS and OS threads. The runtime processes are not counted
// (docs/behaviour.md#held-sessions). Run it with -benchtime=1x.
func BenchmarkHeldIdleSession(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run("sessions="+strconv.Itoa(n), func(b *testing.B) {
			runtimeDir, script := heldFixture(b)
			var rss, private, pss, threads float64
			for b.Loop() {
				held := make([]heldSession, 0, n)
				for range n {
					held = append(held, startIdleHeld(b, runtimeDir, script))
				}
				for _, h := range held {
					rss += float64(pidStatus(h.holderPID, "VmRSS"))
					private += float64(smapsRollup(h.holderPID, "Private_Clean") + smapsRollup(h.holderPID, "Private_Dirty"))
					pss += float64(smapsRollup(h.holderPID, "Pss"))
					threads += float64(pidStatus(h.holderPID, "Threads"))
				}
				for _, h := range held {
					h.release(b, runtimeDir)
				}
			}
			k := float64(b.N * n)
			b.ReportMetric(rss/k, "holder-rss-B/session")
			b.ReportMetric(private/k, "holder-private-B/session")
			b.ReportMetric(pss/k, "holder-pss-B/session")
			b.ReportMetric(threads/k, "holder-threads/session")
		})
	}
}

// BenchmarkHeldAttachFirstMissed is the time from starting `acpdrive
// attach REF --json` on an idle held session (its run killed on the
// turn's first chunk) to attach printing the first event the killed run
// missed (the second chunk): the process's start, the token's read, the
// WebSocket's resume and the replay of the journal
// (docs/behaviour.md#held-sessions). Each op holds a session of its own;
// only the attach is timed.
func BenchmarkHeldAttachFirstMissed(b *testing.B) {
	runtimeDir, script := heldFixture(b)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		h := startIdleHeld(b, runtimeDir, script)
		b.StartTimer()
		began := time.Now()
		cmd := exec.Command(agentBin, "attach", h.ref, "--json")
		cmd.Dir = workspace
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		chunks := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"message_chunk"`) {
				if chunks++; chunks == 2 { // the first was the killed run's
					total += time.Since(began)
					break
				}
			}
		}
		b.StopTimer()
		for sc.Scan() { // the rest of the turn; attach then ends the session
		}
		if err := cmd.Wait(); err != nil {
			b.Errorf("attach: %v", err)
		}
		if chunks < 2 {
			b.Fatal("attach printed no missed chunk")
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-to-first-missed")
}
