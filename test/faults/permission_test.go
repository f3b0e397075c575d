//go:build unix

package faults

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

// Hostile permission requests (docs/behaviour.md#permission-posture):
// under the edit preset, each is answered as documented, and nothing is
// allowed that the policy did not allow.

// permissionCases are the requests, one per prompt (the prompt's text
// names it). "inside" is the one the policy allows.
var permissionCases = map[string]string{
	// options missing altogether: no option fits; cancelled.
	"options-missing": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}]}}`,
	// only allow_always: never chosen to allow; cancelled.
	"only-allow-always": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}]},"options":[{"optionId":"aa","name":"always","kind":"allow_always"}]}`,
	// a kind that only looks like allow_once.
	"allow-once-in-capitals": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}]},"options":[{"optionId":"ao","name":"ok","kind":"ALLOW_ONCE"},{"optionId":"ro","name":"no","kind":"reject_once"}]}`,
	// ".." out of the workspace.
	"dotdot": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"sub/../../x.txt"}]},` + bothOptions + `}`,
	// a symbolic link out of the workspace (locations and rawInput).
	"symlink": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}],"rawInput":{"file_path":"escape/x.txt"}},` + bothOptions + `}`,
	// ".." after a symbolic link: the link's target's parent.
	"symlink-dotdot": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"delete","locations":[{"path":"escape/../x.txt"}]},` + bothOptions + `}`,
	// a path that cannot be read.
	"path-not-a-string": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":7}]},` + bothOptions + `}`,
	// an edit naming no path at all.
	"no-path": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","title":"Edit"},` + bothOptions + `}`,
	// a request for another session: never the policy's.
	"other-session": `{"sessionId":"s-other","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}]},` + bothOptions + `}`,
	// the control: an edit inside is allowed.
	"inside": `{"sessionId":"s1","toolCall":{"toolCallId":"t","kind":"edit","locations":[{"path":"a.txt"}]},` + bothOptions + `}`,
}

const bothOptions = `"options":[{"optionId":"aa","name":"always","kind":"allow_always"},{"optionId":"ao","name":"once","kind":"allow_once"},{"optionId":"ro","name":"no","kind":"reject_once"}]`

// hostilePermissions serves "permission-hostile": a link "escape" to the
// workspace's parent, then, for each prompt, the request its text names;
// the answer is noted under that name.
func hostilePermissions(p *peer, name string) bool {
	if name != "permission-hostile" {
		return false
	}
	cwd, _ := os.Getwd()
	_ = os.Symlink(filepath.Dir(cwd), "escape")
	_ = os.MkdirAll("sub", 0o755)
	p.handshake(initDefault)
	for {
		m := p.await("session/prompt")
		var params struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		_ = json.Unmarshal(m.Params, &params)
		which := ""
		if len(params.Prompt) > 0 {
			which = params.Prompt[0].Text
		}
		if req, ok := permissionCases[which]; ok {
			p.request("700", "session/request_permission", req)
			resp, _ := p.awaitResponse("700")
			note(which, string(resp.Result)+string(resp.Error))
		}
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
	}
}

func TestHostilePermissions(t *testing.T) {
	t.Parallel()
	r := newRig(t, "permission-hostile")
	r.opts.Settings.Permissions = domain.PermissionPolicy{Preset: domain.PresetEdit}
	r.mustStart()
	const (
		cancelled = `{"outcome":{"outcome":"cancelled"}}`
		rejected  = `{"outcome":{"outcome":"selected","optionId":"ro"}}`
		allowed   = `{"outcome":{"outcome":"selected","optionId":"ao"}}`
	)
	want := map[string]struct {
		answer  string
		outcome domain.Outcome
	}{
		"options-missing":        {cancelled, domain.OutcomeInputRequired},
		"only-allow-always":      {cancelled, domain.OutcomeInputRequired},
		"allow-once-in-capitals": {rejected, domain.OutcomeCompleted},
		"dotdot":                 {rejected, domain.OutcomeCompleted},
		"symlink":                {rejected, domain.OutcomeCompleted},
		"symlink-dotdot":         {rejected, domain.OutcomeCompleted},
		"path-not-a-string":      {rejected, domain.OutcomeCompleted},
		"no-path":                {rejected, domain.OutcomeCompleted},
		"other-session":          {rejected, domain.OutcomeCompleted},
		"inside":                 {allowed, domain.OutcomeCompleted},
	}
	for name, w := range want {
		res, _ := r.turn(context.Background(), name)
		if res.Outcome != w.outcome {
			t.Errorf("%s: outcome %s (%v); want %s", name, res.Outcome, res.Err, w.outcome)
		}
		got := r.report()[name]
		if len(got) != 1 || got[0] != w.answer {
			t.Errorf("%s: answered %q; want %s", name, got, w.answer)
		}
	}
	allows := 0
	var by []string
	for _, ev := range r.kept() {
		if ev.Type != domain.EventPermissionDecision || ev.Permission == nil {
			continue
		}
		if ev.Permission.Decision == domain.PermissionAllow {
			allows++
		}
		by = append(by, ev.Permission.By)
	}
	if allows != 1 {
		t.Errorf("%d requests allowed; want only the one inside the workspace", allows)
	}
	if len(by) != len(want) {
		t.Errorf("%d permission_decision events; want one per request (%d)", len(by), len(want))
	}
	if !strings.Contains(strings.Join(by, ","), "other_session") {
		t.Errorf("decided by %q; the other session's request is decided by other_session", by)
	}
}
