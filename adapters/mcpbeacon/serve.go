package mcpbeacon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/domain"
)

// ServerVersion is the version the beacon gives in its MCP serverInfo.
const ServerVersion = "1"

// The MCP messages that end a client's handshake: the initialized
// notification after initialize, and the stateless revision's
// (2026-07-28) server/discover, which replaces initialize.
const (
	methodInitialized = "notifications/initialized"
	methodDiscover    = "server/discover"
)

// clientOf is the name/version of the client that sent req, "" when it
// gave none.
func clientOf(req mcp.Request) string {
	r, ok := req.(interface{ ClientInfo() *mcp.Implementation })
	if !ok {
		return ""
	}
	if info := r.ClientInfo(); info != nil {
		return info.Name + "/" + info.Version
	}
	return ""
}

// reportDialBound bounds the connection to the client's socket.
const reportDialBound = 5 * time.Second

// Serve runs the beacon over in and out (the process's standard streams)
// until in ends or ctx is done; the end of in is a normal end (nil). Once
// the runtime's MCP client completed its handshake (the initialized
// notification after initialize, or a server/discover under the stateless
// MCP revision that replaces initialize), the beacon reports it, once, to
// the socket getenv(EnvSocket) names, with the token getenv(EnvToken); a
// beacon without them reports nothing. Problems go to logger (nil
// discards); nothing but MCP is ever written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, getenv func(string) string, logger *slog.Logger) error {
	logger = logs.OrDiscard(logger)
	socket, token := getenv(EnvSocket), getenv(EnvToken)
	var once sync.Once
	server := mcp.NewServer(&mcp.Implementation{Name: domain.BeaconServerName, Version: ServerVersion}, &mcp.ServerOptions{Logger: logger})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || (method != methodInitialized && method != methodDiscover) {
				return res, err
			}
			once.Do(func() {
				client := clientOf(req)
				if socket == "" || token == "" {
					logger.Warn("tool-server beacon initialized, but has no socket to report to", "mcp_client", client)
					return
				}
				if rerr := reportInitialized(ctx, socket, token, client); rerr != nil {
					logger.Warn("tool-server beacon could not report", "error", rerr)
				}
			})
			return res, err
		}
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
