package mcpresult

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// Main runs the result server as a command: Serve over stdin and stdout
// with the process's environment, warnings on stderr. It takes no
// arguments and returns the exit status: 0 when stdin ended, 1 on a
// failure, 2 on unexpected arguments. The CLI's hidden `acpdrive
// mcp-result` is Main.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "acpdrive %s: takes no arguments (it is started by a runtime, as an MCP server)\n", SubcommandName)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := Serve(ctx, stdin, stdout, os.Getenv, logger); err != nil {
		fmt.Fprintf(stderr, "acpdrive %s: %v\n", SubcommandName, err)
		return 1
	}
	return 0
}
