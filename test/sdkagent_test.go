package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// sdkAgentInstall is how the Go SDK example agent is installed.
const sdkAgentInstall = "go install github.com/coder/acp-go-sdk/example/agent@v0.13.0"

// sdkAgent locates the Go SDK example agent: it fails the test in CI when
// it is missing, and skips with the install command elsewhere.
func sdkAgent(t *testing.T) string {
	t.Helper()
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	require.NoError(t, err)
	bin := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "agent")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Go SDK example agent is not installed (%v); install it with: %s", err, sdkAgentInstall)
		}
		t.Skipf("the Go SDK example agent is not installed; install it with: %s", sdkAgentInstall)
	}
	return bin
}

// TestGoSDKExampleAgentCompletesATurn drives a third-party runtime, the Go
// SDK's example agent, through a whole session: it streams messages, runs a
// tool, asks for a permission that acpdrive refuses with its reject option,
// and ends the turn.
func TestGoSDKExampleAgentCompletesATurn(t *testing.T) {
	if testing.Short() {
		t.Skip("the scripted turn takes about 5 s")
	}
	bin := sdkAgent(t)
	var mu sync.Mutex
	var events []domain.Event
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{bin}
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  cfg,
		Workspace: t.TempDir(),
		Launcher:  localexec.New(localexec.Options{}),
		Clock:     sysclock.Clock{},
		OnEvent: func(ev domain.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		},
	})
	require.NoError(t, err)
	pid := sess.PID()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := sess.Turn(ctx, "hello from acpdrive")
	require.NoError(t, sess.Stop(context.Background()))
	proctest.WaitGroupEmpty(t, pid, 3*time.Second)

	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "end_turn", res.StopReason)
	assert.True(t, strings.HasPrefix(sess.ID(), "sess_"), sess.ID())

	var shape []string
	for _, ev := range events {
		switch {
		case ev.Type == domain.EventMessageChunk:
			continue // one per chunk
		case ev.Type == domain.EventNotification && !strings.HasPrefix(ev.Message, "this session") &&
			ev.Message != domain.MsgPermissionRefused:
			shape = append(shape, "message")
		case ev.Type == domain.EventToolResult:
			shape = append(shape, "tool_result:"+ev.ToolName+":"+map[bool]string{true: "error", false: "ok"}[ev.ToolError])
		default:
			shape = append(shape, string(ev.Type)+":"+ev.Message)
		}
	}
	assert.Equal(t, []string{
		"session_started:session started",
		"notification:this session started with a declared capability gap in: token counts, session continuation, agent version",
		"message",
		"tool_result:read:ok",
		"message",
		`permission_decision:refuse edit "Modifying critical configuration file" (preset refuse)`,
		"notification:" + domain.MsgPermissionRefused,
		"message",
		// the edit call the agent leaves open after the refusal produces no tool_result
		"turn_completed:",
	}, shape)
}
