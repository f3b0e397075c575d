package mcpresult

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/domain"
)

// ServerVersion is the version the server gives in its MCP serverInfo.
const ServerVersion = "1"

// reportBound bounds the report to the client's socket.
const reportBound = 5 * time.Second

// The tool's answers (docs/behaviour.md#structured-results).
const (
	// MsgRecorded answers a valid call.
	MsgRecorded = "result recorded"
	// MsgNotRecorded begins the answer to a valid call the client could
	// not be told of.
	MsgNotRecorded = "the result could not be recorded: "
)

// Serve runs the result server over in and out until in ends or ctx is
// done; the end of in is a normal end (nil). The schema is read from the
// file getenv(EnvSchema) names; a valid call is reported to the socket
// getenv(EnvSocket) with the token getenv(EnvToken).
func Serve(ctx context.Context, in io.Reader, out io.Writer, getenv func(string) string, logger *slog.Logger) error {
	logger = logs.OrDiscard(logger)
	raw, err := os.ReadFile(getenv(EnvSchema))
	if err != nil {
		return fmt.Errorf("read the schema: %w", err)
	}
	resolved, err := resolveSchema(raw)
	if err != nil {
		return err
	}
	socket, token := getenv(EnvSocket), getenv(EnvToken)
	server := toolServer(raw, resolved, logger, func(ctx context.Context, r report) (bool, error) {
		r.Token = token
		return submit(ctx, socket, r)
	})
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// resolveSchema decodes and resolves the schema the tool's arguments are
// validated against.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("decode the schema: %w", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolve the schema: %w", err)
	}
	return resolved, nil
}

// keepFunc hands one call's report to the client and says whether the
// turn now running asks for the result (nothing was kept when not); err
// is set when the client could not be told.
type keepFunc func(ctx context.Context, r report) (asked bool, err error)

// toolServer is the MCP server offering the result tool, on any
// transport: a call is validated against resolved, then reported through
// keep before it is answered (docs/behaviour.md#structured-results).
func toolServer(raw json.RawMessage, resolved *jsonschema.Resolved, logger *slog.Logger, keep keepFunc) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: domain.ResultServerName, Version: ServerVersion}, &mcp.ServerOptions{Logger: logger})
	server.AddTool(&mcp.Tool{Name: domain.ResultToolName, Description: domain.ResultToolDescription, InputSchema: raw},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if why := check(resolved, args); why != "" {
				asked, err := keep(ctx, report{Invalid: why})
				if err != nil {
					logger.Warn("result server could not report an invalid call", "error", err)
				}
				if !asked {
					return toolText(domain.MsgResultNotAsked, true), nil
				}
				return toolText(why, true), nil
			}
			asked, err := keep(ctx, report{Result: args})
			if err != nil {
				logger.Warn("result server could not report", "error", err)
				return toolText(MsgNotRecorded+err.Error(), true), nil
			}
			if !asked {
				return toolText(domain.MsgResultNotAsked, true), nil
			}
			return toolText(MsgRecorded, false), nil
		})
	return server
}

// check returns the validation errors of args, "" when they validate.
func check(resolved *jsonschema.Resolved, args json.RawMessage) string {
	var inst any
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &inst); err != nil {
		return domain.MsgResultInvalidPrefix + err.Error()
	}
	if err := resolved.Validate(inst); err != nil {
		return domain.MsgResultInvalidPrefix + err.Error()
	}
	return ""
}

func toolText(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

// submit reports a call and waits for the client's answer: asked is
// false when the client said the turn now running does not ask for the
// result (nothing was kept); err is set when it did not answer.
func submit(ctx context.Context, socket string, r report) (asked bool, err error) {
	if socket == "" || r.Token == "" {
		return true, errors.New("no socket to report to")
	}
	line, err := json.Marshal(r)
	if err != nil {
		return true, err
	}
	dialCtx, cancel := context.WithTimeout(ctx, reportBound)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dialCtx, "unix", socket)
	if err != nil {
		return true, fmt.Errorf("dial %s: %w", socket, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(reportBound))
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return true, fmt.Errorf("write %s: %w", socket, err)
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	switch {
	case err == nil && got == ack:
		return true, nil
	case err == nil && got == notAsked:
		return false, nil
	}
	return true, fmt.Errorf("the client did not acknowledge the result: %v", err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
