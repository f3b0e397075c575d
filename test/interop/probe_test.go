//go:build interop

package interop

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/test/fakes"
)

// updateProbe rewrites the golden probe tables from the runtimes:
//
//	go test -tags interop -count=1 -run TestProbe ./test/interop/ -update-probe
var updateProbe = flag.Bool("update-probe", false, "rewrite test/interop/testdata/probe/*.txt from what `acpdrive probe` prints")

// probeReport is the part of `acpdrive probe --json` the test reads.
type probeReport struct {
	PID             int `json:"agent_pid"`
	ProtocolVersion int `json:"protocol_version"`
	AgentInfo       *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agent_info"`
	LoadSession         bool     `json:"load_session"`
	SessionCapabilities []string `json:"session_capabilities"`
	AuthMethods         []struct {
		ID string `json:"id"`
	} `json:"auth_methods"`
	NegativeControl struct {
		Sent     bool   `json:"sent"`
		Answered bool   `json:"answered"`
		Code     *int64 `json:"code"`
		Message  string `json:"message"`
	} `json:"negative_control"`
	ContinuationRoute string `json:"continuation_route"`
	TeardownMethod    string `json:"teardown_method"`
	ClaimedBy         string `json:"claimed_by"`
	MeasuredBy        string `json:"measured_by"`
	Capabilities      []struct {
		Label string `json:"label"`
		State string `json:"state"`
	} `json:"capabilities"`
}

// TestProbe runs `acpdrive probe --json` and `acpdrive probe` against each
// runtime, in the runtime's test environment, and checks what acpdrive
// would do with it: the continuation route, the teardown method, the code
// of the negative control. The human tables are pinned in
// testdata/probe/<runtime>.txt and quoted in docs/runtimes.md.
func TestProbe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		rig      func(t *testing.T) (*rig, *fakes.Server)
		agent    string // agentInfo "name version", "" when absent
		load     bool
		sessCaps []string
		route    string
		teardown string
		control  string // the negative control's message
		gaps     []string
		source   string // the measurement source that claims the command and reads the runtime
	}{
		{
			name:     "gemini",
			rig:      func(t *testing.T) (*rig, *fakes.Server) { return geminiRig(t, true) },
			agent:    "gemini-cli 0.61.0",
			load:     true,
			route:    "session/load",
			control:  `"Method not found": _acpdrive.dev/probe/unimplemented`,
			teardown: "",
			source:   "gemini_telemetry",
		},
		{
			name:     "claude",
			rig:      claudeRig,
			agent:    "@zed-industries/claude-agent-acp 0.23.1",
			load:     true,
			sessCaps: []string{"list", "resume", "close", "fork"},
			route:    "session/load",
			teardown: "session/close",
			control:  `"Method not found": _acpdrive.dev/probe/unimplemented`,
			source:   "claude_transcript",
		},
		{
			name:     "codex",
			rig:      codexRig,
			agent:    "codex-acp 0.16.0",
			load:     true,
			sessCaps: []string{"list", "resume", "close"},
			route:    "session/load",
			teardown: "session/close",
			control:  "Method not found",
			source:   "codex_rollout",
		},
		{
			name:    "go-sdk-agent",
			rig:     func(t *testing.T) (*rig, *fakes.Server) { return goSDKAgent(t), nil },
			control: "Method not found",
			gaps:    []string{"token counts", "session continuation", "agent version"},
		},
		{
			name:    "ts-sdk-agent",
			rig:     func(t *testing.T) (*rig, *fakes.Server) { return tsSDKAgent(t), nil },
			control: `"Method not found": _acpdrive.dev/probe/unimplemented`,
			gaps:    []string{"token counts", "session continuation", "agent version"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, srv := c.rig(t)
			out, stderr, code := r.acpdrive(append([]string{"probe", "--json"}, r.launchFlags()...)...)
			require.Equal(t, 0, code, stderr)
			var rep probeReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			proctestGone(t, rep.PID)

			agent := ""
			if rep.AgentInfo != nil {
				agent = rep.AgentInfo.Name + " " + rep.AgentInfo.Version
			}
			assert.Equal(t, c.agent, agent)
			assert.Equal(t, 1, rep.ProtocolVersion)
			assert.Equal(t, c.load, rep.LoadSession)
			assert.ElementsMatch(t, c.sessCaps, rep.SessionCapabilities)
			wantRoute := c.route
			if wantRoute == "" {
				wantRoute = "none (session/new only)" // as the human output says it
			}
			assert.Equal(t, wantRoute, rep.ContinuationRoute)
			assert.Equal(t, c.teardown, rep.TeardownMethod)
			assert.True(t, rep.NegativeControl.Sent && rep.NegativeControl.Answered, "%+v", rep.NegativeControl)
			require.NotNil(t, rep.NegativeControl.Code, "the negative control was answered with an error")
			assert.Equal(t, int64(-32601), *rep.NegativeControl.Code)
			assert.Equal(t, c.control, rep.NegativeControl.Message)
			var gaps []string
			for _, entry := range rep.Capabilities {
				if entry.State == "gap" {
					gaps = append(gaps, entry.Label)
				}
			}
			assert.Equal(t, c.gaps, gaps, "the record a session would start with: a measured runtime has no token counts gap")
			assert.Equal(t, c.source, rep.ClaimedBy, "the shipped source that claims the command")
			assert.Equal(t, c.source, rep.MeasuredBy, "the shipped source that reads the runtime the handshake named")
			// The probe creates no session and calls no model.
			assert.NotContains(t, stderr, "agent session created")
			if srv != nil {
				assert.Empty(t, srv.Requests(), srv.Describe())
			}

			table, stderr, code := r.acpdrive(append([]string{"probe"}, r.launchFlags()...)...)
			require.Equal(t, 0, code, stderr)
			golden := filepath.Join("testdata", "probe", c.name+".txt")
			if *updateProbe {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(table), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update-probe to write it")
			assert.Equal(t, string(want), table)
			t.Logf("acpdrive probe --command %s\n%s", strings.Join(r.command, " "), table)
		})
	}
}
