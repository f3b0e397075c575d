//go:build interop

package interop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The permission policy on today's releases in their asking modes
// (docs/behaviour.md#permission-policy): with the edit preset an edit
// inside the workspace is allowed and made; an edit outside it and a shell
// command are refused and not made; each decision is an event. A rules
// file that sends execute to a person ends the turn turn_input_required.

func withPermissions(p domain.PermissionPolicy) optFn {
	return func(o *app.Options) { o.Settings.Permissions = p }
}

// policyRow is a current release in its asking mode, with the tool calls
// its fake model makes: a file write (edit) and a shell command.
type policyRow struct {
	asking askingRow
	write  func(r *rig, path, text string) *fakes.ToolCall
}

func policyRows() []policyRow {
	rows := askingRows()
	return []policyRow{
		{asking: rows[0], write: func(_ *rig, path, text string) *fakes.ToolCall {
			return &fakes.ToolCall{ID: "toolu_write_" + filepath.Base(path), Name: "Write", Args: map[string]any{"file_path": path, "content": text + "\n"}}
		}},
		{asking: rows[1], write: func(_ *rig, path, text string) *fakes.ToolCall {
			return &fakes.ToolCall{ID: "call_patch_" + filepath.Base(path), Name: "apply_patch", Args: map[string]any{
				"input": "*** Begin Patch\n*** Add File: " + path + "\n+" + text + "\n*** End Patch\n"}}
		}},
	}
}

// decisionsOf are the permission_decision events recorded.
func decisionsOf(evs []domain.Event) []domain.PermissionInfo {
	var out []domain.PermissionInfo
	for _, ev := range evs {
		if ev.Type == domain.EventPermissionDecision && ev.Permission != nil {
			out = append(out, *ev.Permission)
		}
	}
	return out
}

func TestPermissionPolicyEdit(t *testing.T) {
	t.Parallel()
	for _, c := range policyRows() {
		t.Run(c.asking.row, func(t *testing.T) {
			r, srv := c.asking.rig(t, c.asking.row)
			inside := filepath.Join(r.workspace, "inside.txt")
			outside := filepath.Join(r.root, "outside.txt")
			srv.Aside(c.asking.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Write files"))
			srv.Script(
				fakes.Reply{Text: []string{"I write inside."}, Tool: c.write(r, inside, "inside"), Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.Reply{Text: []string{"I write outside."}, Tool: c.write(r, outside, "outside"), Usage: fakes.Usage{Input: 110, Output: 9}},
				fakes.Reply{Text: []string{"I run a command."}, Tool: c.asking.tool(r), Usage: fakes.Usage{Input: 120, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Done."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
			sess := r.mustStart(withSessionConfig(domain.SessionConfig{Mode: c.asking.mode}),
				withPermissions(domain.PermissionPolicy{Preset: domain.PresetEdit}))
			res := r.turn(sess, "write the files, then run the command")
			t.Logf("%s outcome: %s %s", c.asking.row, res.Outcome, res.Message())
			r.stop(sess)
			ds := decisionsOf(r.rec.All())
			var requests int
			for _, m := range r.wire.messages() {
				if m.Method == "session/request_permission" {
					requests++
				}
			}
			assert.Equal(t, requests, len(ds), "one decision per request:\n%s", r.wire.String())
			allowed := 0
			for _, d := range ds {
				t.Logf("%s decision: %s %s %q by %s, option %s, paths %+v", c.asking.row, d.Decision, d.Request.Kind, d.Request.Title, d.By, d.OptionID, d.Request.Paths)
				if d.Decision == domain.PermissionAllow {
					allowed++
					assert.True(t, d.Request.Inside(), "only what is inside is allowed: %+v", d.Request)
					assert.Contains(t, []domain.ToolKind{domain.ToolEdit, domain.ToolRead, domain.ToolSearch, domain.ToolThink}, d.Request.Kind)
				}
				assert.NotEqual(t, domain.PermissionPerson, d.Decision, "every request offered a refusing option")
			}
			_, err := os.Stat(outside)
			assert.True(t, errors.Is(err, os.ErrNotExist), "the edit outside was not made")
			assertNotWritten(t, r)
			got, err := os.ReadFile(inside)
			if c.asking.row == "claude-current" || allowed > 0 {
				require.NoError(t, err, "the edit inside was made")
				assert.Equal(t, "inside", strings.TrimSpace(string(got)))
				assert.Positive(t, allowed)
			} else {
				t.Logf("%s did not ask for the edit inside (%v)", c.asking.row, err)
			}
		})
	}
}

// TestPermissionRulesPersonCLI: `acpdrive run --permissions rules:FILE`
// whose rules send execute to a person ends the turn turn_input_required,
// and run_result counts the decision.
func TestPermissionRulesPersonCLI(t *testing.T) {
	t.Parallel()
	for _, c := range askingRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			rules := filepath.Join(r.root, "rules.txt")
			require.NoError(t, os.WriteFile(rules, []byte("allow kind=read,search,think\nperson kind=execute\nrefuse\n"), 0o644))
			srv.Aside(c.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Run a command"))
			srv.Script(
				fakes.Reply{Text: []string{"Let me write the file."}, Tool: c.tool(r), Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "I did not ", "write the file."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
			run := r.cliWith([]string{"--mode", c.mode, "--permissions", "rules:" + rules}, "write interop into out.txt")
			require.NotNil(t, run.Run, "the session started: %s", run.Stderr)
			require.Len(t, run.Results, 1, "%v", run.shape(r))
			assert.Equal(t, "turn_input_required", run.Results[0].Outcome)
			ds := decisionsOf(run.Events)
			require.NotEmpty(t, ds, "%v", run.shape(r))
			assert.Equal(t, domain.PermissionPerson, ds[0].Decision)
			assert.Equal(t, domain.ToolExecute, ds[0].Request.Kind)
			assert.Equal(t, "rules "+rules+":2", ds[0].By)
			assertNotWritten(t, r)
		})
	}
}
