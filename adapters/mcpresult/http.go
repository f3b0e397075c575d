package mcpresult

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// The HTTP server's bounds: the header of a request, and the wait for
// calls in flight at Release before the connections are closed. A
// request's body is bounded by maxReportBytes.
const (
	httpHeaderBound   = 10 * time.Second
	httpShutdownBound = 2 * time.Second
)

// tokenBytes is the size of the random token: 256 bits.
const tokenBytes = 32

// armHTTP serves the result tool from this process over MCP's Streamable
// HTTP transport (docs/behaviour.md#structured-results): a listener on
// 127.0.0.1 with a port of the system's choice, whose one path holds a
// random token, and the declared server's URL and Authorization header
// carry it. A request to any other path is answered 404, one whose
// Authorization header names another token 401; neither reaches the
// tool. Every call is kept in this process before it is answered.
func (s *Server) armHTTP(ctx context.Context, schema json.RawMessage) (ports.ArmedResult, error) {
	resolved, err := resolveSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("result server schema: %w", err)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("result server token: %w", err)
	}
	token := hex.EncodeToString(raw)
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("result server listen: %w", err)
	}
	a := &armed{log: s.log, asks: true, where: l.Addr().String()}
	tools := toolServer(schema, resolved, s.log, func(_ context.Context, r report) (bool, error) {
		return a.keep(r), nil
	})
	path := "/" + domain.ResultServerName + "/" + token
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log, MaxRequestBodyBytes: maxReportBytes})
	srv := &http.Server{
		Handler:           &guard{path: path, bearer: "Bearer " + token, next: mcpHandler},
		ReadHeaderTimeout: httpHeaderBound,
		ErrorLog:          log.New(io.Discard, "", 0), // nothing of a stray request is written anywhere
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Debug("result server stopped serving", "error", err)
		}
	}()
	var once sync.Once
	a.release = func() error {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), httpShutdownBound)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				_ = srv.Close() // a call still in flight: its connection goes
			}
			<-served
		})
		return nil
	}
	a.server = domain.MCPServer{
		Name:      domain.ResultServerName,
		Transport: domain.MCPHTTP,
		URL:       "http://" + l.Addr().String() + path,
		Headers:   []domain.NameValue{{Name: "Authorization", Value: "Bearer " + token}},
	}
	s.log.Debug("result server armed", "address", l.Addr().String(), "transport", string(domain.MCPHTTP))
	return a, nil
}

// guard lets through the requests of the armed session's path only, and
// of those none whose Authorization header names another token: the
// path's token is the secret, the header a runtime forwards must agree
// with it.
type guard struct {
	path   string
	bearer string
	next   http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.URL.Path), []byte(g.path)) != 1 {
		http.NotFound(w, r)
		return
	}
	if auth := r.Header.Get("Authorization"); auth != "" && subtle.ConstantTimeCompare([]byte(auth), []byte(g.bearer)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}
