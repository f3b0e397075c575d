package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// pathTree builds a workspace with links out of it and returns the
// workspace, the outside directory and the judge of an edit policy.
func pathTree(t *testing.T) (ws, out string, j *permissionJudge) {
	t.Helper()
	base := t.TempDir()
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.go"), nil, 0o644))
	require.NoError(t, os.Symlink(out, filepath.Join(ws, "escape")))                     // a directory link out
	require.NoError(t, os.Symlink("../../out/x", filepath.Join(ws, "sub", "rel")))       // a relative link out
	require.NoError(t, os.Symlink(filepath.Join(ws, "a.go"), filepath.Join(ws, "in")))   // a link that stays in
	require.NoError(t, os.Symlink("loop2", filepath.Join(ws, "loop1")))                  // a loop
	require.NoError(t, os.Symlink("loop1", filepath.Join(ws, "loop2")))                  //
	require.NoError(t, os.Symlink(filepath.Join(ws, "sub"), filepath.Join(out, "back"))) // outside, pointing in
	j = newPermissionJudge(Options{Workspace: ws, Settings: domain.SessionSettings{
		Permissions: domain.PermissionPolicy{Preset: domain.PresetEdit}}}, false, nil)
	return ws, out, j
}

// TestJudgePath: paths are judged after resolving "..", "." and symbolic
// links; a path that cannot be known is not inside
// (docs/behaviour.md#permission-posture).
func TestJudgePath(t *testing.T) {
	t.Parallel()
	ws, out, j := pathTree(t)
	cases := []struct {
		path   string
		inside bool
		known  bool
	}{
		{filepath.Join(ws, "a.go"), true, true},
		{filepath.Join(ws, "new", "file.go"), true, true},
		{"a.go", true, true}, // relative: the workspace's
		{"sub/../a.go", true, true},
		{filepath.Join(ws, "..", "out", "x"), false, true},
		{filepath.Join(ws, "sub", "..", "..", "out"), false, true},
		{"../out/x", false, true},
		{"escape/../out/x", false, true}, // relative, ".." after a link
		{"escape/../ws/a.go", true, true},
		{filepath.Join(ws, "escape", "x"), false, true},
		{ws + "/escape/../out/x", false, true}, // ".." after a link: the target's parent, not the name's
		{ws + "/escape/../ws/a.go", true, true},
		{filepath.Join(ws, "sub", "rel"), false, true},
		{filepath.Join(ws, "in"), true, true},
		{filepath.Join(ws, "nothere", "..", "escape", "y"), false, true},
		{filepath.Join(out, "back", "z"), true, true},
		{filepath.Join(ws, "loop1"), false, false},
		{filepath.Join(ws, "a.go", "x"), false, false}, // not a directory
		{"/\x00", false, false},
	}
	for _, c := range cases {
		got := j.judgePath(c.path, true)
		assert.Equal(t, c.inside, got.Inside, c.path)
		assert.Equal(t, c.known, got.Resolved != "", "%s: %q", c.path, got.Resolved)
	}
	assert.Equal(t, domain.PermissionPath{Path: "x"}, j.judgePath("x", false))
	remote := newPermissionJudge(Options{Workspace: ws}, true, nil)
	assert.Equal(t, domain.PermissionPath{Path: filepath.Join(ws, "a.go")}, remote.judgePath(filepath.Join(ws, "a.go"), true),
		"a remote launch's paths cannot be known here")
}

// TestJudgeAddDirs: an additional directory is a root too.
func TestJudgeAddDirs(t *testing.T) {
	t.Parallel()
	ws, out, _ := pathTree(t)
	j := newPermissionJudge(Options{Workspace: ws, Settings: domain.SessionSettings{
		Session: domain.SessionConfig{AdditionalDirectories: []string{out}}}}, false, nil)
	assert.True(t, j.judgePath(filepath.Join(ws, "escape", "x"), true).Inside)
}

func permRequest(t *testing.T, toolCall string, kinds ...string) jsonrpc.Request {
	t.Helper()
	var opts []acpwire.PermissionOption
	for i, k := range kinds {
		opts = append(opts, acpwire.PermissionOption{OptionID: k + "-" + string(rune('0'+i)), Kind: k, Name: k})
	}
	raw, err := json.Marshal(map[string]any{"sessionId": "s-1", "toolCall": json.RawMessage(toolCall), "options": opts})
	require.NoError(t, err)
	return jsonrpc.Request{ID: jsonrpc.IntID(1), Method: acpwire.MethodRequestPermission, Params: raw}
}

// TestJudgeRequest: what the policy sees of a request (locations,
// rawInput paths, the command), and the answer the edit preset gets.
func TestJudgeRequest(t *testing.T) {
	t.Parallel()
	ws, out, j := pathTree(t)
	all := []string{acpwire.OptionAllowAlways, acpwire.OptionAllowOnce, acpwire.OptionRejectOnce}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cases := []struct {
		name     string
		toolCall string
		kinds    []string
		decision domain.PermissionVerdict
		option   string
	}{
		{"edit inside by location", `{"toolCallId":"t","kind":"edit","title":"Edit a.go","locations":[{"path":` + q(filepath.Join(ws, "a.go")) + `}]}`,
			all, domain.PermissionAllow, "allow_once-1"},
		{"edit inside by rawInput", `{"toolCallId":"t","kind":"edit","rawInput":{"file_path":` + q(filepath.Join(ws, "a.go")) + `}}`,
			all, domain.PermissionAllow, "allow_once-1"},
		{"edit with one path out", `{"kind":"edit","locations":[{"path":` + q(filepath.Join(ws, "a.go")) + `}],"rawInput":{"file_path":` + q(filepath.Join(out, "x")) + `}}`,
			all, domain.PermissionRefuse, "reject_once-2"},
		{"edit through .. out", `{"kind":"edit","locations":[{"path":` + q(ws+"/../out/x") + `}]}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"edit through a link out", `{"kind":"edit","locations":[{"path":` + q(filepath.Join(ws, "escape", "x")) + `}]}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"edit with no path", `{"kind":"edit","title":"Edit"}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"edit with an unreadable location", `{"kind":"edit","locations":[{"path":5}]}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"edit with locations not a list", `{"kind":"edit","locations":{"path":"a.go"}}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"edit with a path of the wrong type", `{"kind":"edit","locations":[{"path":"a.go"}],"rawInput":{"path":{"x":1}}}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"move with changes inside", `{"kind":"move","rawInput":{"changes":{"a.go":{},"sub/b.go":{}}}}`, all, domain.PermissionAllow, "allow_once-1"},
		{"execute", `{"kind":"execute","rawInput":{"command":["bash","-lc","ls"]}}`, all, domain.PermissionRefuse, "reject_once-2"},
		{"read anywhere", `{"kind":"read","locations":[{"path":"/etc/hostname"}]}`, all, domain.PermissionAllow, "allow_once-1"},
		{"edit inside, only allow_always", `{"kind":"edit","locations":[{"path":"a.go"}]}`, []string{acpwire.OptionAllowAlways}, domain.PermissionPerson, ""},
		{"edit inside, no options", `{"kind":"edit","locations":[{"path":"a.go"}]}`, nil, domain.PermissionPerson, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := permRequest(t, c.toolCall, c.kinds...)
			a := decide(req, false, j.judge(req, domain.PermissionParent, true))
			require.NotNil(t, a.decision)
			assert.Equal(t, c.decision, a.decision.Decision)
			assert.Equal(t, c.option, a.decision.OptionID)
			raw, _ := json.Marshal(a.result)
			if c.option == "" {
				assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(raw))
				assert.Equal(t, domain.MsgPermissionUngrantable, a.person)
			} else {
				assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"`+c.option+`"}}`, string(raw))
			}
		})
	}
	req := permRequest(t, `{"kind":"execute","rawInput":{"command":["bash","-lc","ls"]}}`, all...)
	jd := j.judge(req, domain.PermissionParent, true)
	assert.Equal(t, "bash -lc ls", jd.req.Command)
	assert.Equal(t, domain.ToolExecute, jd.req.Kind)

	// A toolCall that does not decode: invalid params, as before.
	req = permRequest(t, `"edit"`, all...)
	assert.Nil(t, j.judge(req, domain.PermissionParent, true))
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), decide(req, false, nil).errCode)

	// A request for a session this run does not follow is never the
	// policy's: an edit inside is refused.
	req = permRequest(t, `{"kind":"edit","locations":[{"path":"a.go"}]}`, all...)
	a := decide(req, false, j.judge(req, domain.PermissionOther, false))
	assert.Equal(t, domain.PermissionRefuse, a.decision.Decision)
	assert.Equal(t, "other_session", a.decision.By)
	// While an ending is pending: cancelled, whatever the policy says.
	a = decide(req, true, j.judge(req, domain.PermissionParent, true))
	assert.Equal(t, domain.PermissionCancelled, a.decision.Decision)
	assert.Empty(t, a.person)
}
