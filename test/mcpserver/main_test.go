package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// build builds the server into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func readLog(t *testing.T, path string) []Record {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// exercise connects, lists the tools, calls record_note and checks the
// answer.
func exercise(t *testing.T, tr mcp.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "selftest", Version: "1"}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != ToolName {
		t.Fatalf("tools: %+v", tools.Tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "noted: hi" {
		t.Fatalf("result: %+v", res)
	}
}

func checkLog(t *testing.T, recs []Record, transport string) {
	t.Helper()
	var methods []string
	var calls []string
	for _, r := range recs {
		if r.Transport != transport {
			t.Errorf("record transport %q, want %q", r.Transport, transport)
		}
		switch r.Kind {
		case "method":
			methods = append(methods, r.Method)
			if r.Method == "initialize" && r.Client != "selftest/1" {
				t.Errorf("initialize client %q", r.Client)
			}
		case "call":
			calls = append(calls, r.Tool+" "+string(r.Arguments))
		}
	}
	// SDK v1.8.0's own client opens with server/discover (SEP-2575) and,
	// depending on the transport, then initializes the classic way; other
	// clients (Gemini CLI, Claude Code) just initialize.
	got := strings.Join(methods, ",")
	if !strings.HasSuffix(got, "tools/list,tools/call") || !(strings.HasPrefix(got, "initialize,") || strings.HasPrefix(got, "server/discover,")) {
		t.Errorf("methods %s, want a handshake then tools/list,tools/call", got)
	}
	if got, want := strings.Join(calls, ";"), `record_note {"text":"hi"}`; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}

func TestStdio(t *testing.T) {
	bin := build(t)
	log := filepath.Join(t.TempDir(), "log.jsonl")
	cmd := exec.Command(bin, "-transport", "stdio")
	cmd.Env = append(os.Environ(), "MCPSERVER_LOG="+log)
	exercise(t, &mcp.CommandTransport{Command: cmd})
	checkLog(t, readLog(t, log), "stdio")
}

func TestHTTP(t *testing.T) {
	bin := build(t)
	log := filepath.Join(t.TempDir(), "log.jsonl")
	cmd := exec.Command(bin, "-transport", "http", "-log", log)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	exercise(t, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	recs := readLog(t, log)
	var mcpRecs []Record
	for _, r := range recs {
		if r.Kind == "http" {
			if r.Path != "/mcp" {
				t.Errorf("http path %q", r.Path)
			}
			continue
		}
		mcpRecs = append(mcpRecs, r)
	}
	checkLog(t, mcpRecs, "http")
}

func TestRefusesNonLoopback(t *testing.T) {
	bin := build(t)
	out, err := exec.Command(bin, "-transport", "http", "-addr", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Fatalf("err %v, out %s", err, out)
	}
}
