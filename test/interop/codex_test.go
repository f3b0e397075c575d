//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// codex-acp 0.16.0 (@zed-industries/codex-acp) against a fake OpenAI
// Responses API.

const codexModel = "gpt-5.4"

// codexRig runs codex-acp through its npm JS wrapper (a node process that
// spawns the native binary and forwards no signal) against a fresh fake
// server. CODEX_HOME is the rig's own, outside the runtime's TMPDIR; its
// config.toml selects the fake provider, disables retries and trusts the
// workspace, so no authenticate call is needed.
func codexRig(t *testing.T) (*rig, *fakes.Server) { return codexRigOf(t, "codex") }

// codexRigOf is codexRig for the runtime row installed as row: "codex"
// (0.16.0) or "codex-current" (today's release).
func codexRigOf(t testing.TB, row string) (*rig, *fakes.Server) {
	nodePath(t)
	r := newRig(t, locate(t, row, row+"/node_modules/.bin/codex-acp"))
	srv := r.serve(fakes.NewOpenAI())
	codexHome := filepath.Join(r.root, "codex-home")
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = %q
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, codexModel, srv.URL(), r.workspace))
	r.setenv("CODEX_HOME", codexHome)
	r.setenv("FAKE_OPENAI_API_KEY", "fake-openai-key")
	// Today's release has the model title the conversation in a side
	// call; it is answered aside, so it takes no scripted reply.
	srv.Aside(codexTitleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Interop session"))
	logEvidenceAtEnd(t, row, r)
	return r, srv
}

// codexTitleMarker is a phrase of codex-acp's title request.
const codexTitleMarker = "generate a very short title for a conversation"

// codexNative is the native binary the wrapper spawns.
func codexNative(t *testing.T) string {
	return locate(t, "codex", "codex/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp")
}

var codexGaps = gapNotice(domain.CapTokenCounts)

func TestCodexTextTurn(t *testing.T) {
	t.Parallel()
	want := textTurn(codexGaps, "Hello from the fake Codex.")
	script := func(srv *fakes.Server) {
		srv.Script(fakes.TextReply(fakes.Usage{Input: 120, Output: 7, Cached: 40}, "Hello ", "from the ", "fake Codex."))
	}
	check := func(t *testing.T, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 1, srv.Describe())
		assert.Equal(t, "Bearer fake-openai-key", calls[0].Header.Get("Authorization"))
		body := calls[0].JSON()
		assert.Equal(t, codexModel, body["model"])
		assert.Equal(t, true, body["stream"])
		assert.True(t, calls[0].BodyContains(`"text":"say hello"`), "the prompt reaches the model")
		assert.Len(t, srv.Requests(), 1, srv.Describe())
	}

	t.Run("library", func(t *testing.T) {
		r, srv := codexRig(t)
		script(srv)
		sess := r.mustStart()
		info := agentIs(t, sess, "codex-acp", "0.16.0")
		adv := info.Advertised
		assert.True(t, adv.MCPHTTP)
		assert.False(t, adv.MCPSSE)
		assert.True(t, adv.Close && adv.Resume && adv.List, "close, resume and list advertised")
		assert.Equal(t, []string{"chatgpt", "codex-api-key", "openai-api-key"}, authMethodIDs(info))
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps())

		libraryTurn(t, r, sess, "say hello", completed, want)
		check(t, srv)
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/close"}, r.wire.methodsOut())
		assert.NotContains(t, r.logs.String(), "force-terminated")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := codexRig(t)
		script(srv)
		run := cliCompleted(t, r, want, "say hello")
		assertGaps(t, run, "token counts")
		check(t, srv)
	})
}

// TestCodexPermissionAbort: the model asks to run a command outside the
// sandbox; codex-acp asks for consent (a string request id, no tool_call
// before it); acpdrive refuses with "abort" (reject_once); codex-acp then
// ends the whole turn with stopReason "cancelled" though nobody cancelled,
// which acpdrive reports as turn_failed with the specification's message.
func TestCodexPermissionAbort(t *testing.T) {
	t.Parallel()
	wantOutcome := outcome{
		Outcome:    "turn_failed",
		Kind:       "turn_failed",
		Message:    domain.MsgUnaskedCancel,
		StopReason: "cancelled",
	}
	want := []string{
		started,
		codexGaps,
		"message_chunk*",
		"notification:Let me write the file.",
		refused,
		"turn_failed:" + domain.MsgUnaskedCancel,
	}
	script := func(r *rig, srv *fakes.Server) {
		srv.Script(fakes.Reply{
			Text: []string{"Let me write the file."},
			Tool: &fakes.ToolCall{ID: "call_interop_1", Name: "exec_command", Args: map[string]any{
				"cmd":                 "echo interop > out.txt",
				"workdir":             r.workspace,
				"sandbox_permissions": "require_escalated",
				"justification":       "write out.txt outside the sandbox",
			}},
			Usage: fakes.Usage{Input: 100, Output: 9},
		})
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		assert.Len(t, srv.ModelCalls(), 1, "the turn ends at the refusal:\n%s", srv.Describe())
		assertNotWritten(t, r)
	}

	t.Run("library", func(t *testing.T) {
		r, srv := codexRig(t)
		script(r, srv)
		sess := r.mustStart()
		libraryTurn(t, r, sess, "write interop into out.txt", wantOutcome, want)
		check(t, r, srv)

		perm, ok := r.wire.request("session/request_permission")
		require.True(t, ok)
		var id string
		require.NoError(t, json.Unmarshal(perm.ID, &id), "codex-acp's request ids are strings: %s", perm.ID)
		opts, toolCallID := permissionOptions(t, perm)
		assert.Equal(t, "call_interop_1", toolCallID)
		assert.Equal(t, []string{"approved=allow_once", "approved-execpolicy-amendment=allow_always", "abort=reject_once"}, opts)
		answer, ok := r.wire.answerTo(perm.ID)
		require.True(t, ok)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"abort"}}`, string(answer.Result))
		for _, m := range r.wire.methodsOut() {
			assert.NotEqual(t, "session/cancel", m, "acpdrive did not cancel")
		}
		resp, ok := r.wire.responseTo("session/prompt")
		require.True(t, ok)
		assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := codexRig(t)
		script(r, srv)
		run := cliFailed(t, r, wantOutcome, want, "write interop into out.txt", "never sent")
		assert.True(t, *run.Results[0].Retryable, "turn_failed is retryable")
		check(t, r, srv)
	})
}

// TestCodexWrapperOrphan: codex-acp's npm wrapper does not forward signals,
// so a SIGTERM to the wrapper alone orphans the native binary (shown first,
// on a process group of the test's own). acpdrive signals and kills the
// whole process group, so after Stop nothing of it survives.
func TestCodexWrapperOrphan(t *testing.T) {
	t.Parallel()
	native := codexNative(t)

	t.Run("the pitfall", func(t *testing.T) {
		r, _ := codexRig(t)
		cmd := exec.Command(r.command[0])
		cmd.Env = r.envList()
		cmd.Dir = r.workspace
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		defer stdin.Close()
		require.NoError(t, cmd.Start())
		pgid := cmd.Process.Pid
		t.Cleanup(func() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			proctest.WaitGroupEmpty(t, pgid, 3*time.Second)
		})
		child := waitForMember(t, pgid, native, 10*time.Second)

		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		_ = cmd.Wait()
		time.Sleep(500 * time.Millisecond)
		assert.True(t, proctest.Alive(child), "the native binary outlives its wrapper")
		assert.Equal(t, []int{child}, proctest.GroupMembers(pgid))
	})

	t.Run("acpdrive kills the group", func(t *testing.T) {
		r, srv := codexRig(t)
		srv.Script(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
		sess := r.mustStart()
		child := waitForMember(t, sess.PID(), native, 10*time.Second)
		assert.NotEqual(t, sess.PID(), child, "the runtime's PID is the wrapper's")
		assert.Equal(t, completed, outcomeOf(r.turn(sess, "say ok")))
		r.stop(sess) // asserts the group is empty
		assert.False(t, proctest.Alive(child))
	})
}

// waitForMember waits for a live member of process group pgid whose
// command line starts with prog, and returns its PID.
func waitForMember(t *testing.T, pgid int, prog string, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, pid := range proctest.GroupMembers(pgid) {
			raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if err == nil && (strings.HasPrefix(string(raw), prog+"\x00") || string(raw) == prog) {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process %s in group %d after %s (members %v)", prog, pgid, within, proctest.GroupMembers(pgid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
