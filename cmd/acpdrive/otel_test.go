package main_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// receiver is an OTLP/HTTP collector of the test's own: it decodes every
// export request it receives.
type receiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	metrics  []*metricspb.Metric
	requests int
	bad      []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := readBody(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if err != nil {
		r.bad = append(r.bad, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		var m colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &m); err != nil {
			r.bad = append(r.bad, err.Error())
		}
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		resp = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var m collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &m); err != nil {
			r.bad = append(r.bad, err.Error())
		}
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				r.metrics = append(r.metrics, sm.Metrics...)
			}
		}
		resp = &collmetrics.ExportMetricsServiceResponse{}
	default:
		r.bad = append(r.bad, "unexpected path "+req.URL.Path)
		http.NotFound(w, req)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func readBody(req *http.Request) ([]byte, error) {
	var rd io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		rd = zr
	}
	return io.ReadAll(rd)
}

// cleanEnv is the test process's environment without any OTEL_ variable.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

func strAttr(attrs []*commonpb.KeyValue, key string) string {
	for _, kv := range attrs {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestRunExportsOverOTLP runs the CLI with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at the test's receiver: the session's spans and metrics arrive,
// and the trace context the reference agent received in each prompt's
// _meta (its log, and its #meta turn's answer) is that turn's span.
func TestRunExportsOverOTLP(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	bin := testbin.Path(t)
	agentLog := filepath.Join(t.TempDir(), "agent.log")
	cmd := exec.Command(bin, "run", "--json", "--command", bin+" agent --log "+agentLog, "#tools", "#meta")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "OTEL_SERVICE_NAME=acpdrive-test")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.NotContains(t, stderr.String(), "telemetry export")

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	assert.Empty(t, rcv.bad)
	byName := map[string][]*tracepb.Span{}
	for _, s := range rcv.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	require.Len(t, byName["acpdrive.session"], 1, "spans received: %d", len(rcv.spans))
	session := byName["acpdrive.session"][0]
	assert.Equal(t, "acpdrive-reference-agent", strAttr(session.Attributes, "acp.agent.name"))
	assert.Equal(t, "session/new", strAttr(session.Attributes, "acp.session.route"))
	turns := byName["acpdrive.turn"]
	require.Len(t, turns, 2)
	sort.Slice(turns, func(i, j int) bool { return turns[i].StartTimeUnixNano < turns[j].StartTimeUnixNano })
	turn := turns[0]
	for _, tr := range turns {
		assert.Equal(t, session.SpanId, tr.ParentSpanId)
		assert.Equal(t, "turn_completed", strAttr(tr.Attributes, "acpdrive.turn.outcome"))
	}
	assert.Len(t, byName["acpdrive.tool_call"], 11)
	for _, c := range byName["acpdrive.tool_call"] {
		assert.Equal(t, turn.SpanId, c.ParentSpanId)
	}
	for _, name := range []string{"acpdrive.start.launch", "acpdrive.start.initialize", "acpdrive.start.session/new", "acpdrive.teardown"} {
		require.Len(t, byName[name], 1, name)
		assert.Equal(t, session.SpanId, byName[name][0].ParentSpanId, name)
	}

	metrics := map[string]*metricspb.Metric{}
	for _, m := range rcv.metrics {
		metrics[m.Name] = m
	}
	require.Contains(t, metrics, "acpdrive.turns")
	points := metrics["acpdrive.turns"].GetSum().GetDataPoints()
	require.Len(t, points, 1)
	assert.Equal(t, int64(2), points[0].GetAsInt())
	assert.Equal(t, "turn_completed", strAttr(points[0].Attributes, "acpdrive.turn.outcome"))
	for _, name := range []string{"acpdrive.tool_calls", "acpdrive.start.duration", "acpdrive.teardown.duration", "acpdrive.sessions.running"} {
		assert.Contains(t, metrics, name)
	}

	// The agent received the turn span's context.
	recs, err := refagent.ReadLog(agentLog)
	require.NoError(t, err)
	var metas []map[string]string
	for _, r := range recs {
		if r.Kind == "request" && r.Method == "session/prompt" {
			var msg struct {
				Params struct {
					Meta map[string]string `json:"_meta"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(r.Message, &msg))
			metas = append(metas, msg.Params.Meta)
		}
	}
	require.Len(t, metas, 2)
	for i, tr := range turns {
		want := fmt.Sprintf("00-%s-%s-01", hex.EncodeToString(tr.TraceId), hex.EncodeToString(tr.SpanId))
		assert.Equal(t, map[string]string{"traceparent": want}, metas[i], "prompt %d", i+1)
	}

	// What the runtime saw is what the operator sees in the #meta turn's
	// answer.
	var answer string
	for _, l := range parseLines(t, stdout.String()) {
		if l.Type == "notification" && strings.HasPrefix(l.Message, "{") {
			answer = l.Message
		}
	}
	want := fmt.Sprintf(`{"traceparent":"00-%s-%s-01"}`, hex.EncodeToString(turns[1].TraceId), hex.EncodeToString(turns[1].SpanId))
	assert.Equal(t, want, answer)
}

// TestRunWithoutOTLPVariablesSendsNothing runs the CLI with no
// OTEL_EXPORTER_OTLP_* variable while a receiver listens on the default
// OTLP/HTTP address: nothing arrives, and the prompt carries no trace
// context.
func TestRunWithoutOTLPVariablesSendsNothing(t *testing.T) {
	rcv := &receiver{}
	l, err := net.Listen("tcp", "127.0.0.1:4318")
	if err != nil {
		t.Skipf("the default OTLP/HTTP port is in use here: %v", err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: rcv}}
	srv.Start()
	defer srv.Close()
	bin := testbin.Path(t)
	agentLog := filepath.Join(t.TempDir(), "agent.log")
	cmd := exec.Command(bin, "run", "--json", "--command", bin+" agent --log "+agentLog, "#meta")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), "OTEL_SERVICE_NAME=acpdrive-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var answers []string
	for _, l := range ofType(parseLines(t, string(out)), "notification") {
		if strings.HasPrefix(l.Message, "{") {
			answers = append(answers, l.Message)
		}
	}
	assert.Equal(t, []string{"{}"}, answers, "the prompt carried no _meta")
	rcv.mu.Lock()
	assert.Zero(t, rcv.requests)
	rcv.mu.Unlock()
	recs, err := refagent.ReadLog(agentLog)
	require.NoError(t, err)
	prompts := 0
	for _, r := range recs {
		if r.Kind == "request" && r.Method == "session/prompt" {
			prompts++
			assert.NotContains(t, string(r.Message), "_meta")
		}
	}
	assert.Equal(t, 1, prompts)
}

// TestRunWithAnUnreachableCollector: a failed export is reported on
// stderr and changes nothing else: the turn's output and the exit status
// are those of a run without telemetry.
func TestRunWithAnUnreachableCollector(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := "http://" + l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there any more
	cmd := exec.Command(testbin.Path(t), "run", "--json", "hello")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Contains(t, stderr.String(), "acpdrive: telemetry export: ")
	results := ofType(parseLines(t, stdout.String()), "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_completed", results[0].Outcome)
}
