package refagent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

const examplePath = "testdata/example-script.json"

// TestScriptRoundTrip parses the documented example, re-encodes it and
// checks that nothing is lost: the re-encoded script parses to the same
// value and means the same JSON as the file.
func TestScriptRoundTrip(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseScript(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseScript(out)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(normalize(t, s), normalize(t, again)) {
		t.Fatalf("round trip changed the script:\n%s", out)
	}
	var fromFile, fromMarshal any
	if err := json.Unmarshal(data, &fromFile); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &fromMarshal); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile, fromMarshal) {
		t.Fatalf("re-encoded JSON differs from the file:\n%s", out)
	}

	// Spot checks that the fields landed where the documentation says.
	if s.Initialize.ProtocolVersion == nil || *s.Initialize.ProtocolVersion != 1 || s.Initialize.DelayMs != 10 {
		t.Fatalf("initialize %+v", s.Initialize)
	}
	if got := s.Methods["session/new"][1].Error; got == nil || got.Code != -32000 {
		t.Fatalf("session/new[1] %+v", s.Methods["session/new"][1])
	}
	if m := s.Turns["hello"].Steps[1].MessageID; m == nil || *m != "" {
		t.Fatalf("explicit empty messageId lost: %v", m)
	}
	if s.Turns["work"].Cancel != CancelError || !s.Turns["work"].CancelRequests || s.DefaultTurn != "hello" || !s.StringRequestIDs {
		t.Fatal("turn options lost")
	}
}

// normalize re-encodes compacted so raw JSON fields compare by meaning.
func normalize(t *testing.T, s *Script) any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBuiltinScenariosRoundTrip(t *testing.T) {
	t.Parallel()
	names := ScenarioNames()
	if len(names) < 40 {
		t.Fatalf("only %d scenarios", len(names))
	}
	for _, name := range names {
		s, ok := Scenario(name)
		if !ok {
			t.Fatalf("Scenario(%q) missing", name)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Description == "" {
			t.Fatalf("%s: no description", name)
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseScript(out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(normalize(t, s), normalize(t, again)) {
			t.Fatalf("%s: round trip changed the script", name)
		}
		if len(s.Turns) != len(TurnNames()) {
			t.Fatalf("%s: %d turns, want every named turn", name, len(s.Turns))
		}
	}
	for _, want := range []string{"echo", "tools", "permission-refusable", "permission-no-reject", "elicitation",
		"stop-end_turn", "stop-refusal", "stop-max_tokens", "stop-max_turn_requests", "stop-cancelled", "stop-unknown",
		"updates", "between-turns", "crash", "orphan-stdout", "huge-line", "garbage", "slow-accept", "ignore-sigterm",
		"burst", "fs-call", "wrong-version", "exit-before-init", "no-agent-info", "close", "hang-init"} {
		if _, ok := Scenario(want); !ok {
			t.Errorf("scenario %q missing", want)
		}
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown field", `{"turnz":{}}`, `unknown field "turnz"`},
		{"unknown step", `{"turns":{"a":{"steps":[{"step":"dance"}]}}}`, `unknown step kind "dance"`},
		{"stop outside a turn", `{"startup":[{"step":"stop"}]}`, `may only appear in a turn`},
		{"bad cancel mode", `{"cancel":"maybe"}`, `unknown mode "maybe"`},
		{"dangling default turn", `{"defaultTurn":"nope"}`, `no turn named "nope"`},
		{"two answers", `{"methods":{"x":[{"never":true,"result":{}}]}}`, `at most one of`},
		{"prompt scripted", `{"methods":{"session/prompt":[{}]}}`, `cannot be scripted`},
		{"request without method", `{"turns":{"a":{"steps":[{"step":"request"}]}}}`, `needs a method`},
		{"exit code range", `{"turns":{"a":{"steps":[{"step":"exit","code":300}]}}}`, `outside 0..255`},
		{"turn name with space", `{"turns":{"a b":{"steps":[]}}}`, `no white space`},
		{"trailing data", `{} {}`, `trailing data`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseScript([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	t.Run("unknown scenario", func(t *testing.T) {
		code, _, se := run("--scenario", "nope")
		if code != 2 || !strings.Contains(se, `unknown scenario "nope"`) {
			t.Fatalf("%d %q", code, se)
		}
	})
	t.Run("exclusive", func(t *testing.T) {
		if code, _, _ := run("--scenario", "echo", "--script", examplePath); code != 2 {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("bad flag", func(t *testing.T) {
		if code, _, _ := run("--nope"); code != 2 {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("positional", func(t *testing.T) {
		if code, _, _ := run("extra"); code != 2 {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("bad script", func(t *testing.T) {
		code, _, se := run("--script", writeScript(t, `{"turns":{"a":{"steps":[{"step":"dance"}]}}}`))
		if code != 2 || !strings.Contains(se, "dance") {
			t.Fatalf("%d %q", code, se)
		}
	})
	t.Run("list", func(t *testing.T) {
		code, out, _ := run("--list-scenarios")
		if code != 0 || !strings.Contains(out, "permission-refusable") || !strings.Contains(out, "hang-init") {
			t.Fatalf("%d %q", code, out)
		}
	})
	t.Run("print-script", func(t *testing.T) {
		code, out, _ := run("--scenario", "close", "--print-script")
		if code != 0 {
			t.Fatal(code)
		}
		s, err := ParseScript([]byte(out))
		if err != nil || s.Name != "close" || s.Methods["session/close"][0].ExitAfter == nil {
			t.Fatalf("%v %+v", err, s)
		}
	})
	t.Run("stdin EOF exits 0", func(t *testing.T) {
		if code, out, _ := run(); code != 0 || out != "" {
			t.Fatalf("%d %q", code, out)
		}
	})
}

// TestExampleScript drives the documented example file through --script.
func TestExampleScript(t *testing.T) {
	t.Parallel()
	h := startAgent(t, "--script", examplePath)
	h.send(initReq)
	h.expect(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true},"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"close":{},"resume":{}}},"agentInfo":{"name":"example-agent","title":"Example agent","version":"9.9.9"},"authMethods":[{"id":"agent-login","name":"Agent login"}]}}`)
	h.send(newReq)
	h.expect(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"example-1"}}`,
		update("example-1", `{"sessionUpdate":"available_commands_update","availableCommands":`+string(defaultCommands)+`}`))
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	h.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`)

	// The default turn.
	h.send(prompt(3, "example-1", "hi"))
	h.expect(
		chunk("example-1", "m-1", "Hello from the "),
		chunk("example-1", "m-1", "example script!"),
		update("example-1", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"that went well"}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"example.com/tokens":12}}}`,
	)

	// The work turn, answered all the way through.
	h.send(prompt(4, "example-1", "#work abcdef"))
	h.expect(
		chunk("example-1", "echo", "abcd"),
		chunk("example-1", "echo", "ef"),
		update("example-1", `{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit main.go","kind":"edit","status":"pending","locations":[{"path":"/work/main.go","line":3}],"rawInput":{"path":"/work/main.go"}}`),
		`{"jsonrpc":"2.0","id":"r-0","method":"session/request_permission","params":{"sessionId":"example-1","toolCall":{"toolCallId":"c1","title":"Edit main.go","kind":"edit"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
	)
	h.send(`{"jsonrpc":"2.0","id":"r-0","result":{"outcome":{"outcome":"selected","optionId":"no"}}}`)
	h.expect(
		chunk("example-1", "report-2-1", "permission outcome: selected no"),
		update("example-1", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edited main.go","status":"completed","content":[{"type":"diff","path":"/work/main.go","oldText":"a","newText":"b"}],"rawOutput":{"ok":true}}`),
		update("example-1", `{"sessionUpdate":"plan","entries":[{"content":"ship it","priority":"high","status":"pending"}]}`),
		update("example-1", `{"sessionUpdate":"usage_update","used":100,"size":1000,"cost":{"amount":0.01,"currency":"USD"}}`),
		update("someone-else", `{"sessionUpdate":"notice","severity":"info","title":"hi"}`),
		`{"jsonrpc":"2.0","id":"r-1","method":"fs/read_text_file","params":{"path":"/work/main.go","sessionId":"example-1"}}`,
	)
	h.send(`{"jsonrpc":"2.0","id":"r-1","result":{"content":"package main\n"}}`)
	h.expect(
		chunk("example-1", "report-2-2", `fs/read_text_file answer: result {"content":"package main\n"}`),
		`{"jsonrpc":"2.0","id":"r-2","method":"elicitation/create","params":{"mode":"url","message":"Log in","elicitationId":"e1","url":"https://example.com/login"}}`,
		stopLine(4, "max_tokens"),
		update("example-1", `{"sessionUpdate":"current_mode_update","currentModeId":"architect"}`),
		update("example-1", `{"sessionUpdate":"session_info_update","title":"Renamed","updatedAt":"2026-02-02T00:00:00Z"}`),
		update("example-1", `{"sessionUpdate":"config_option_update","configOptions":[]}`),
	)

	// The work turn cancelled while the permission request is open: error
	// mode answers -32800 after the onCancel update, and the open request is
	// withdrawn with $/cancel_request.
	h.send(prompt(5, "example-1", "#work"))
	h.next() // tool_call
	h.expect(`{"jsonrpc":"2.0","id":"r-3","method":"session/request_permission","params":{"sessionId":"example-1","toolCall":{"toolCallId":"c1","title":"Edit main.go","kind":"edit"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`)
	h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"example-1"}}`)
	h.expect(
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r-3"}}`,
		update("example-1", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"cancelled","status":"failed"}`),
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"Request cancelled"}}`,
	)

	// onCancel may answer the prompt itself.
	h.send(prompt(6, "example-1", "#patient"))
	h.expect(update("example-1", `{"sessionUpdate":"user_message_chunk","messageId":"u-4","content":{"type":"text","text":"are you there?"}}`))
	h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"example-1"}}`)
	h.expect(chunk("example-1", "bye", "goodbye"), stopLine(6, "end_turn"))

	// A broken answer, then nothing more for that prompt.
	h.send(prompt(7, "example-1", "#broken"))
	h.expect(`{"jsonrpc":"2.0","id":7,"result":42}`)
	h.quiet(50 * time.Millisecond)

	// A load replays before answering; an extension method answers null.
	h.send(`{"jsonrpc":"2.0","id":8,"method":"session/load","params":{"sessionId":"old","cwd":"/tmp","mcpServers":[]}}`)
	h.expect(
		update("old", `{"sessionUpdate":"user_message_chunk","messageId":"replay-u","content":{"type":"text","text":"earlier prompt"}}`),
		chunk("old", "replay-a", "earlier answer"),
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
	)
	h.send(`{"jsonrpc":"2.0","id":9,"method":"_example/anything","params":{}}`)
	h.expect(`{"jsonrpc":"2.0","id":9,"result":null}`)
	h.send(`{"jsonrpc":"2.0","id":10,"method":"session/list","params":{}}`)
	h.quiet(50 * time.Millisecond)

	// close answers, then the process exits 0.
	h.send(`{"jsonrpc":"2.0","id":11,"method":"session/close","params":{"sessionId":"example-1"}}`)
	h.expect(`{"jsonrpc":"2.0","id":11,"result":{}}`)
	if code := h.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	se := h.stderr.String()
	if !strings.HasPrefix(se, "example agent starting\n") || !strings.Contains(se, "initialized\n") {
		t.Fatalf("stderr %q", se)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	if got := splitBySize("abcdefghij", 4); !reflect.DeepEqual(got, []string{"abcd", "efgh", "ij"}) {
		t.Fatal(got)
	}
	if got := splitBySize("日本語", 2); !reflect.DeepEqual(got, []string{"日", "本", "語"}) {
		t.Fatal(got)
	}
	if got := splitBySize("", 4); got != nil {
		t.Fatal(got)
	}
	if got := splitN("abcdefg", 3); !reflect.DeepEqual(got, []string{"ab", "cd", "efg"}) {
		t.Fatal(got)
	}
	if got := splitN("ab", 5); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatal(got)
	}
	if got := renderHugeLine("s", "m", 1000); len(got) != 1001 || !json.Valid(got[:1000]) {
		t.Fatal(len(got))
	}
}

// BenchmarkBurst measures the burst step: writing to io.Discard (the step's
// own cost: rendering once, batching ~64 KiB per write) and through an
// os.Pipe drained by a reader (what a client on stdout sees).
func BenchmarkBurst(b *testing.B) {
	run := func(b *testing.B, w io.Writer) {
		a := newAgent(&Script{}, w, io.Discard)
		defer a.cancel()
		sc := &stepCtx{session: "ref-1", turn: 1}
		st := &Step{Step: StepBurst, Count: b.N}
		b.ReportAllocs()
		b.ResetTimer()
		if err := a.burst(context.Background(), sc, st); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	}
	b.Run("discard", func(b *testing.B) { run(b, io.Discard) })
	b.Run("pipe", func(b *testing.B) {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, r)
			close(drained)
		}()
		run(b, w)
		w.Close()
		<-drained
		r.Close()
	})
}
