package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/ports"
)

// sdkClient is the Go SDK's client-side connection on one reference agent,
// launched through the same local launcher (same pipes, same process
// group) as acpdrive's session.
type sdkClient struct {
	proc    ports.Process
	conn    *acp.ClientSideConnection
	session acp.SessionId
	sink    *sink
	logs    *recordingHandler
}

// startSDK is the Go SDK starter.
func startSDK(ctx context.Context, s *sink) (burstClient, error) {
	plan, err := localexec.New(localexec.Options{}).Prepare(ports.LaunchRequest{Command: agentCommand(), Workspace: workspace})
	if err != nil {
		return nil, err
	}
	proc, err := plan.Start(ctx, nil)
	if err != nil {
		return nil, err
	}
	c := &sdkClient{proc: proc, sink: s, logs: &recordingHandler{}}
	c.conn = acp.NewClientSideConnection(sdkHandler{s}, proc.Stdin(), proc.Stdout())
	c.conn.SetLogger(slog.New(c.logs))

	fail := func(err error) (burstClient, error) {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = c.stop(stopCtx)
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := c.conn.Initialize(callCtx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "acp-go-sdk-bench", Version: "0"},
	}); err != nil {
		return fail(fmt.Errorf("sdk initialize: %w", err))
	}
	sess, err := c.conn.NewSession(callCtx, acp.NewSessionRequest{Cwd: workspace, McpServers: []acp.McpServer{}})
	if err != nil {
		return fail(fmt.Errorf("sdk session/new: %w", err))
	}
	if sess.SessionId == "" {
		return fail(errNoSession)
	}
	c.session = sess.SessionId
	return c, nil
}

// drainQuiet is how long the handled count must stay unchanged, after the
// SDK's connection dropped, before the notifications it had already queued
// count as all handled.
const drainQuiet = 25 * time.Millisecond

// settlePoll is how often settle looks at the count; it bounds how late
// the end of a dropped turn is taken.
const settlePoll = 200 * time.Microsecond

func (c *sdkClient) turn(ctx context.Context, prompt string) turnReport {
	t0 := time.Now()
	resp, err := c.conn.Prompt(ctx, acp.PromptRequest{
		SessionId: c.session,
		Prompt:    []acp.ContentBlock{acp.TextBlock(prompt)},
	})
	end := time.Now()
	rep := turnReport{outcome: string(resp.StopReason)}
	if err != nil {
		rep.outcome = "error"
		rep.err = err
		if cause := c.logs.cause(); cause != "" {
			rep.err = fmt.Errorf("%w (SDK log: %s)", err, cause)
		}
	}
	select {
	case <-c.conn.Done():
		rep.disconnected = true
		// The SDK keeps handling what it had queued before the drop; wait
		// for the count to settle and end the clock at its last change.
		end = c.settle(end)
	default:
	}
	rep.elapsed, rep.sent, rep.end = end.Sub(t0), t0, end
	return rep
}

// settle polls the handled count until it has not changed for drainQuiet
// and returns when it last changed (or since, when it never did).
func (c *sdkClient) settle(since time.Time) time.Time {
	last, lastAt := c.sink.received(), since
	for quietSince := time.Now(); time.Since(quietSince) < drainQuiet; {
		time.Sleep(settlePoll)
		if n := c.sink.received(); n != last {
			last, lastAt, quietSince = n, time.Now(), time.Now()
		}
	}
	return lastAt
}

// stop follows acpdrive's teardown order: SIGTERM to the group, close
// stdin, wait for the exit, SIGKILL the group, close stdout, wait for the
// SDK's reader, release the pipes. When the SDK has already dropped the
// connection, nothing reads standard output any more and the agent may be
// blocked writing to it, so stdout is closed first.
func (c *sdkClient) stop(ctx context.Context) error {
	select {
	case <-c.conn.Done():
		_ = c.proc.CloseStdout()
	default:
	}
	_ = c.proc.Terminate()
	_ = c.proc.Stdin().Close()
	select {
	case <-c.proc.Exited():
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
	killErr := c.proc.Kill()
	_ = c.proc.CloseStdout()
	select {
	case <-c.conn.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := c.proc.Release(); err != nil {
		return err
	}
	return killErr
}

func (c *sdkClient) pid() int { return c.proc.Identity().PID }

// sdkHandler is the SDK's Client: SessionUpdate feeds the sink, every other
// method is refused the way an unattended client would.
type sdkHandler struct{ s *sink }

var _ acp.Client = sdkHandler{}

func (h sdkHandler) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	text := ""
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
		text = m.Content.Text.Text
	}
	h.s.chunk(text)
	return nil
}

func (sdkHandler) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
}

func (sdkHandler) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (sdkHandler) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (sdkHandler) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (sdkHandler) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (sdkHandler) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (sdkHandler) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (sdkHandler) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// recordingHandler keeps the SDK connection's Warn and Error log records
// (it logs an overflow of its notification queue, and the cause of a
// disconnect), so a run can report why the connection ended.
type recordingHandler struct {
	mu      sync.Mutex
	records []string
}

func (h *recordingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "raw" { // the SDK logs whole lines on parse errors
			return true
		}
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, b.String())
	h.mu.Unlock()
	return nil
}

func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// cause returns the first Error record, or the "connection closed" Info
// record, or "".
func (h *recordingHandler) cause() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if !strings.HasPrefix(r, "connection closed") {
			return r
		}
	}
	if len(h.records) > 0 {
		return h.records[0]
	}
	return ""
}
