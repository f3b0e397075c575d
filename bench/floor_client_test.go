package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// floorClient is the floor every client is compared with: a minimal,
// hand-written ACP client with no protocol library. It starts the agent
// with os/exec, writes the handshake and the prompts as literal lines, reads
// standard output with a bufio.Scanner and decodes every line with one
// json.Unmarshal into a typed struct of the notification, the way a client
// that does nothing else would. It does no bounds, no stall clock, no event
// mapping and no containment: it is the cost of reading and decoding the
// stream, nothing more.
type floorClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	sc     *bufio.Scanner
	sink   *sink
	nextID int
	sessID string
}

// floorLine is one line of the stream decoded in one pass: a response
// (id plus result or error) or a session/update notification.
type floorLine struct {
	ID     *int64 `json:"id"`
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			MessageID     string `json:"messageId"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	} `json:"params"`
	Result struct {
		SessionID  string `json:"sessionId"`
		StopReason string `json:"stopReason"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// floorMaxLine is the floor's line bound, the same as acpdrive's.
const floorMaxLine = 10 << 20

// startFloor is the floor's starter.
func startFloor(ctx context.Context, s *sink) (burstClient, error) {
	c, err := launchMinimal(s)
	if err != nil {
		return nil, err
	}
	if err := c.handshake(ctx); err != nil {
		c.kill()
		return nil, err
	}
	return c, nil
}

// launchMinimal starts the agent in its own process group.
func launchMinimal(s *sink) (*floorClient, error) {
	cmd := exec.Command(agentBin, "agent")
	cmd.Dir = workspace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), floorMaxLine+1)
	return &floorClient{cmd: cmd, stdin: stdin, stdout: stdout, sc: sc, sink: s}, nil
}

// handshake sends initialize and session/new and reads their answers.
func (c *floorClient) handshake(context.Context) error {
	if _, err := c.call(`"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return fmt.Errorf("floor initialize: %w", err)
	}
	ws, _ := json.Marshal(workspace)
	res, err := c.call(`"session/new","params":{"cwd":` + string(ws) + `,"mcpServers":[]}`)
	if err != nil {
		return fmt.Errorf("floor session/new: %w", err)
	}
	if res.Result.SessionID == "" {
		return errNoSession
	}
	c.sessID = res.Result.SessionID
	return nil
}

// call writes one request (methodAndParams is the text after "method":)
// and reads lines until its response, handing every chunk on the way to
// the sink.
func (c *floorClient) call(methodAndParams string) (floorLine, error) {
	c.nextID++
	id := int64(c.nextID)
	line := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":` + methodAndParams + "}\n"
	if _, err := io.WriteString(c.stdin, line); err != nil {
		return floorLine{}, err
	}
	for c.sc.Scan() {
		var m floorLine
		if err := json.Unmarshal(c.sc.Bytes(), &m); err != nil {
			continue // the floor skips what it cannot read
		}
		if m.Method == "session/update" {
			if m.Params.Update.SessionUpdate == "agent_message_chunk" {
				c.sink.chunk(m.Params.Update.Content.Text)
			}
			continue
		}
		if m.ID != nil && *m.ID == id && m.Method == "" {
			if m.Error != nil {
				return m, fmt.Errorf("error response %d: %s", m.Error.Code, m.Error.Message)
			}
			return m, nil
		}
	}
	if err := c.sc.Err(); err != nil {
		return floorLine{}, err
	}
	return floorLine{}, io.ErrUnexpectedEOF
}

func (c *floorClient) turn(_ context.Context, prompt string) turnReport {
	text, _ := json.Marshal(prompt)
	sess, _ := json.Marshal(c.sessID)
	t0 := time.Now()
	res, err := c.call(`"session/prompt","params":{"sessionId":` + string(sess) + `,"prompt":[{"type":"text","text":` + string(text) + `}]}`)
	end := time.Now()
	rep := turnReport{outcome: res.Result.StopReason, err: err, elapsed: end.Sub(t0), sent: t0, end: end}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		rep.disconnected = true
	}
	return rep
}

// stop closes stdin (the agent exits at EOF), then kills the group if it
// has not exited within a few seconds, and waits.
func (c *floorClient) stop(context.Context) error {
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	return nil
}

// kill ends the agent's group at once and waits.
func (c *floorClient) kill() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	_ = c.stdin.Close()
	_ = c.cmd.Wait()
}

func (c *floorClient) pid() int { return c.cmd.Process.Pid }
