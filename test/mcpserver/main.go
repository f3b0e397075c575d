// Command mcpserver is the interop suite's own MCP server, built on the
// official MCP Go SDK (github.com/modelcontextprotocol/go-sdk). It lives in
// a module of its own so the SDK never enters acpdrive's go.mod.
//
// It offers one tool, record_note {text}, which answers "noted: <text>".
// It records what it sees as JSON lines (Record) appended to the file named
// by -log (or $MCPSERVER_LOG): every MCP request or notification received
// ("method" records, with the client's name and version on initialize),
// every tool call with its arguments ("call" records), and in HTTP mode
// every HTTP request ("http" records). Each record is one write to a file
// opened with O_APPEND, so several server processes may share a log.
//
//	mcpserver -transport stdio -log FILE            # MCP over stdin/stdout
//	mcpserver -transport http -addr 127.0.0.1:0 -log FILE
//
// In HTTP mode it serves the streamable HTTP transport at /mcp on addr (a
// loopback address only), prints its URL, http://127.0.0.1:<port>/mcp, as
// the first line of standard output, and runs until SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the name of the server's only tool.
const ToolName = "record_note"

// Record is one line of the log.
type Record struct {
	// Kind is "method", "call" or "http".
	Kind      string `json:"kind"`
	Transport string `json:"transport"`
	PID       int    `json:"pid"`
	// Method is the MCP method ("method" records) or the HTTP method
	// ("http" records).
	Method string `json:"method,omitempty"`
	// Client is the client's name/version, on initialize.
	Client string `json:"client,omitempty"`
	// Tool and Arguments describe a tool call.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Path and Headers describe an HTTP request (headers starting X-).
	Path    string            `json:"path,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

type recorder struct {
	mu        sync.Mutex
	f         *os.File
	transport string
}

func (r *recorder) write(rec Record) {
	if r.f == nil {
		return
	}
	rec.Transport, rec.PID = r.transport, os.Getpid()
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(line, '\n'))
}

// NoteArgs are record_note's arguments.
type NoteArgs struct {
	Text string `json:"text" jsonschema:"the note to record"`
}

func newServer(rec *recorder) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "acpdrive-interop-mcp", Version: "0.1.0"}, nil)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r := Record{Kind: "method", Method: method}
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && p.ClientInfo != nil {
				r.Client = p.ClientInfo.Name + "/" + p.ClientInfo.Version
			}
			rec.write(r)
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(server, &mcp.Tool{
		Name:        ToolName,
		Description: "Record a short note for the acpdrive interop suite.",
	}, func(_ context.Context, req *mcp.CallToolRequest, args NoteArgs) (*mcp.CallToolResult, any, error) {
		rec.write(Record{Kind: "call", Tool: req.Params.Name, Arguments: req.Params.Arguments})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + args.Text}}}, nil, nil
	})
	return server
}

func main() {
	transport := flag.String("transport", "stdio", "stdio or http")
	addr := flag.String("addr", "127.0.0.1:0", "listen address in http mode (loopback only)")
	logPath := flag.String("log", os.Getenv("MCPSERVER_LOG"), "append JSON-line records to `FILE` (default $MCPSERVER_LOG)")
	flag.Parse()

	rec := &recorder{transport: *transport}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		rec.f = f
	}
	server := newServer(rec)

	switch *transport {
	case "stdio":
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			fatal(err)
		}
	case "http":
		if err := serveHTTP(server, rec, *addr); err != nil {
			fatal(err)
		}
	default:
		fatal(fmt.Errorf("unknown -transport %q (want stdio or http)", *transport))
	}
}

func serveHTTP(server *mcp.Server, rec *recorder, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: listen on a loopback address only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers := map[string]string{}
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-") {
				headers[k] = strings.Join(v, ",")
			}
		}
		if len(headers) == 0 {
			headers = nil
		}
		rec.write(Record{Kind: "http", Method: r.Method, Path: r.URL.Path, Headers: headers})
		mcpHandler.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s/mcp\n", ln.Addr().String())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-sigs:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		// Streams (GET event streams) stay open: close them.
		_ = srv.Close()
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "mcpserver: %v\n", err)
	os.Exit(1)
}
