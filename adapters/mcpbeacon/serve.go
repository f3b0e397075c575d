package mcpbeacon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acpdrive/acpdrive/domain"
)

// ServerVersion is the version the beacon gives in its MCP serverInfo.
const ServerVersion = "1"

// ResourceURI is the one resource the beacon offers: its text says what
// the server is. The beacon offers no tool.
const ResourceURI = "acpdrive://beacon"

// reportDialBound bounds the connection to the client's socket.
const reportDialBound = 5 * time.Second

// resourceText is the text of ResourceURI.
const resourceText = "acpdrive's tool-server beacon: it tells acpdrive that this runtime started the MCP servers of the session. It offers nothing to call.\n"

// Serve runs the beacon over in and out (the process's standard streams)
// until in ends or ctx is done; the end of in is a normal end (nil). Once
// the runtime's MCP client completed initialize, the beacon reports it to
// the socket getenv(EnvSocket) names, with the token getenv(EnvToken); a
// beacon without them reports nothing. Problems go to logger (nil
// discards); nothing but MCP is ever written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, getenv func(string) string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	socket, token := getenv(EnvSocket), getenv(EnvToken)
	server := mcp.NewServer(&mcp.Implementation{Name: domain.BeaconServerName, Version: ServerVersion}, &mcp.ServerOptions{
		Logger: logger,
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			client := ""
			if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
				client = p.ClientInfo.Name + "/" + p.ClientInfo.Version
			}
			if socket == "" || token == "" {
				logger.Warn("tool-server beacon initialized, but has no socket to report to", "mcp_client", client)
				return
			}
			if err := reportInitialized(ctx, socket, token, client); err != nil {
				logger.Warn("tool-server beacon could not report", "error", err)
			}
		},
	})
	server.AddResource(&mcp.Resource{
		URI:         ResourceURI,
		Name:        domain.BeaconServerName,
		Description: "What this server is (it offers nothing to call).",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ResourceURI, MIMEType: "text/plain", Text: resourceText}}}, nil
	})
	err := server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// reportInitialized writes the one report line to the client's socket.
func reportInitialized(ctx context.Context, socket, token, client string) error {
	line, err := json.Marshal(report{Token: token, MCPClient: client})
	if err != nil {
		return err
	}
	dialCtx, cancel := context.WithTimeout(ctx, reportDialBound)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dialCtx, "unix", socket)
	if err != nil {
		return fmt.Errorf("dial %s: %w", socket, err)
	}
	defer conn.Close()
	_ = conn.SetWriteDeadline(time.Now().Add(reportDialBound))
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", socket, err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
