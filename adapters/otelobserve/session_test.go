package otelobserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// telemetry is an SDK pair with in-memory readers.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		assert.NoError(t, tel.tp.Shutdown(context.Background()))
		assert.NoError(t, tel.mp.Shutdown(context.Background()))
	})
	return tel
}

func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// TestTracedSession runs a whole session on the reference agent as a real
// process: a turn with tool calls, a cancelled turn, the teardown. It
// checks the span tree, the attributes, the trace context the agent
// received in each prompt's _meta, and the metrics.
func TestTracedSession(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)

	agentLog := filepath.Join(t.TempDir(), "agent.log")
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{testbin.Path(t), "agent", "--log", agentLog}
	cfg.StallTimeout = 0
	ctx := context.Background()
	cancelCtx, cancelTurn := context.WithCancel(ctx)
	defer cancelTurn()
	opts := app.Options{
		Settings:  cfg,
		Workspace: t.TempDir(),
		Launcher:  localexec.New(localexec.Options{}),
		Clock:     sysclock.Clock{},
		Observers: []ports.Observer{obs},
		OnAgentText: func(_, text string) {
			if strings.Contains(text, "Waiting") {
				cancelTurn() // the wait-cancel turn is running: cancel it
			}
		},
	}
	sess, err := app.Start(ctx, opts)
	require.NoError(t, err)
	tools := sess.Turn(ctx, "#tools")
	require.Equal(t, domain.OutcomeCompleted, tools.Outcome, tools.Message())
	updates := sess.Turn(ctx, "#updates")
	require.Equal(t, domain.OutcomeCompleted, updates.Outcome, updates.Message())
	cancelled := sess.Turn(cancelCtx, "#wait-cancel")
	require.Equal(t, domain.OutcomeCancelled, cancelled.Outcome, cancelled.Message())
	caps := sess.Capabilities()
	require.NoError(t, sess.Stop(ctx))

	spans := tel.spans.Ended()
	tree := newTree(spans)
	t.Logf("span tree:\n%s", tree.String())

	root := tree.only(t, otelobserve.SpanSession)
	assert.False(t, root.Parent().IsValid(), "the session span is a root span")
	assert.Equal(t, codes.Ok, root.Status().Code)
	attrs := attrMap(root.Attributes())
	assert.Equal(t, "acpdrive-reference-agent", attrs[otelobserve.AttrAgentName].AsString())
	assert.Equal(t, sess.AgentInfo().Version, attrs[otelobserve.AttrAgentVersion].AsString())
	assert.Equal(t, "session/new", attrs[otelobserve.AttrRoute].AsString())
	assert.Equal(t, sess.ID(), attrs[otelobserve.AttrSessionID].AsString())
	wantGaps := []string{}
	for _, g := range caps.Gaps() {
		wantGaps = append(wantGaps, string(g))
	}
	assert.Equal(t, wantGaps, attrs[otelobserve.AttrCapabilityGaps].AsStringSlice())

	// The session's children, in start order.
	var names []string
	for _, c := range tree.children(root) {
		names = append(names, c.Name())
	}
	assert.Equal(t, []string{
		"acpdrive.start.launch", "acpdrive.start.initialize", "acpdrive.start.session/new",
		otelobserve.SpanTurn, otelobserve.SpanTurn, otelobserve.SpanTurn, otelobserve.SpanTeardown,
	}, names)
	for _, c := range tree.children(root) {
		assert.False(t, c.StartTime().Before(root.StartTime()), c.Name())
		assert.False(t, c.EndTime().After(root.EndTime()), c.Name())
		assert.False(t, c.EndTime().Before(c.StartTime()), c.Name())
	}

	// The teardown steps, in order, inside the teardown span.
	td := tree.only(t, otelobserve.SpanTeardown)
	var steps []string
	for _, c := range tree.children(td) {
		steps = append(steps, c.Name())
		assert.False(t, c.StartTime().Before(td.StartTime()), c.Name())
		assert.False(t, c.EndTime().After(td.EndTime()), c.Name())
	}
	require.NotEmpty(t, steps)
	assert.Equal(t, "acpdrive.teardown.close_stdin", steps[0])
	assert.Contains(t, steps, "acpdrive.teardown.kill")
	assert.Equal(t, "acpdrive.teardown.release", steps[len(steps)-1])

	// The turns.
	turns := tree.named(otelobserve.SpanTurn)
	require.Len(t, turns, 3)
	middle := turns[1]
	turns = []sdktrace.ReadOnlySpan{turns[0], turns[2]}
	first, second := attrMap(turns[0].Attributes()), attrMap(turns[1].Attributes())
	assert.Equal(t, trace.SpanKindClient, turns[0].SpanKind())
	assert.Equal(t, "turn_completed", first[otelobserve.AttrTurnOutcome].AsString())
	assert.Equal(t, "end_turn", first[otelobserve.AttrStopReason].AsString())
	assert.Equal(t, codes.Ok, turns[0].Status().Code)
	assert.Equal(t, "turn_cancelled", second[otelobserve.AttrTurnOutcome].AsString())
	assert.Equal(t, cancelled.StopReason, second[otelobserve.AttrStopReason].AsString())
	assert.Equal(t, codes.Unset, turns[1].Status().Code)
	assert.Equal(t, sess.ID(), first[otelobserve.AttrSessionID].AsString())

	// The tool calls of the first turn: eleven, execute failed.
	calls := tree.children(turns[0])
	require.Len(t, calls, 11)
	assert.Empty(t, tree.children(turns[1]))
	failed := 0
	for _, c := range calls {
		a := attrMap(c.Attributes())
		assert.Equal(t, otelobserve.SpanToolCall, c.Name())
		assert.NotEmpty(t, a[otelobserve.AttrToolKind].AsString())
		assert.NotEmpty(t, a[otelobserve.AttrToolTitle].AsString())
		if a[otelobserve.AttrToolError].AsBool() {
			failed++
			assert.Equal(t, "execute", a[otelobserve.AttrToolKind].AsString())
			assert.Equal(t, codes.Error, c.Status().Code)
		}
		assert.False(t, c.StartTime().Before(turns[0].StartTime()))
		assert.False(t, c.EndTime().After(turns[0].EndTime()))
	}
	assert.Equal(t, 1, failed)

	// The updates turn's malformed lines are events of its span; its
	// text is not recorded.
	var malformed []string
	for _, ev := range middle.Events() {
		if ev.Name == otelobserve.EventMalformed {
			malformed = append(malformed, attrMap(ev.Attributes)[otelobserve.AttrMessage].AsString())
		}
	}
	assert.Equal(t, []string{domain.MsgUnknownUpdate, domain.MsgNonTextChunk}, malformed)
	for _, ev := range middle.Events() {
		assert.NotContains(t, fmt.Sprint(ev.Attributes), "session-state updates")
	}

	// The trace context each prompt carried is its turn span's.
	metas := promptMetas(t, agentLog)
	require.Len(t, metas, 3)
	metas = []map[string]string{metas[0], metas[2]}
	for i, turn := range turns {
		sc := turn.SpanContext()
		want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
		assert.Equal(t, want, metas[i]["traceparent"], "prompt %d", i+1)
	}

	// Metrics.
	ms := tel.metrics(t)
	assert.Equal(t, map[string]int64{"turn_completed": 2, "turn_cancelled": 1},
		sums(t, ms[otelobserve.MetricTurns], otelobserve.AttrTurnOutcome))
	toolSums := sums(t, ms[otelobserve.MetricToolCalls], otelobserve.AttrToolKind)
	assert.Equal(t, int64(1), toolSums["execute"])
	assert.Equal(t, int64(2), toolSums["other"], "other, and the unknown kind teleport")
	assert.Equal(t, map[string]int64{"acpdrive-reference-agent": 0},
		sums(t, ms[otelobserve.MetricSessionsRunning], otelobserve.AttrAgentName))
	assert.Equal(t, map[string]uint64{otelobserve.StartStarted: 1},
		counts(t, ms[otelobserve.MetricStartDuration], otelobserve.AttrStartOutcome))
	assert.Equal(t, map[string]uint64{"": 1}, counts(t, ms[otelobserve.MetricTeardownDuration], ""))
}

// promptMetas reads the _meta of every session/prompt the agent received.
func promptMetas(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs, err := refagent.ReadLog(path)
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range recs {
		if r.Kind != "request" || r.Method != "session/prompt" {
			continue
		}
		var msg struct {
			Params struct {
				Meta map[string]string `json:"_meta"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(r.Message, &msg))
		out = append(out, msg.Params.Meta)
	}
	return out
}

func attrMap(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// sums returns the data points of an int64 sum by the value of key.
func sums(t *testing.T, m metricdata.Metrics, key string) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "metric %q is an int64 sum, got %T", m.Name, m.Data)
	out := map[string]int64{}
	for _, dp := range s.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(key))
		out[v.String()] += dp.Value
	}
	return out
}

// counts returns the counts of a histogram's data points by the value of key.
func counts(t *testing.T, m metricdata.Metrics, key string) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "metric %q is a float64 histogram, got %T", m.Name, m.Data)
	out := map[string]uint64{}
	for _, dp := range h.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(key))
		out[v.String()] += dp.Count
	}
	return out
}

// spanTree indexes recorded spans by parent.
type spanTree struct {
	all   []sdktrace.ReadOnlySpan
	kids  map[trace.SpanID][]sdktrace.ReadOnlySpan
	roots []sdktrace.ReadOnlySpan
}

func newTree(spans []sdktrace.ReadOnlySpan) *spanTree {
	tr := &spanTree{all: spans, kids: map[trace.SpanID][]sdktrace.ReadOnlySpan{}}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	for _, s := range spans {
		if p := s.Parent(); p.IsValid() && ids[p.SpanID()] {
			tr.kids[p.SpanID()] = append(tr.kids[p.SpanID()], s)
		} else {
			tr.roots = append(tr.roots, s)
		}
	}
	for id := range tr.kids {
		byStart(tr.kids[id])
	}
	byStart(tr.roots)
	return tr
}

// byStart orders spans by start time, then by end time (a step of no
// measurable length before the next one).
func byStart(s []sdktrace.ReadOnlySpan) {
	sort.SliceStable(s, func(i, j int) bool {
		if !s[i].StartTime().Equal(s[j].StartTime()) {
			return s[i].StartTime().Before(s[j].StartTime())
		}
		return s[i].EndTime().Before(s[j].EndTime())
	})
}

func (tr *spanTree) children(s sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	return tr.kids[s.SpanContext().SpanID()]
}

func (tr *spanTree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.all {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	byStart(out)
	return out
}

func (tr *spanTree) only(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := tr.named(name)
	require.Len(t, got, 1, "spans named %q", name)
	return got[0]
}

// String prints the tree, one span a line: name, duration, status, and
// the attributes and events that say what happened.
func (tr *spanTree) String() string {
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		fmt.Fprintf(&b, "%s%s  %s", strings.Repeat("  ", depth), s.Name(), s.EndTime().Sub(s.StartTime()).Round(time.Microsecond))
		if s.Status().Code != codes.Unset {
			fmt.Fprintf(&b, "  status=%s", s.Status().Code)
		}
		var kv []string
		for _, a := range s.Attributes() {
			if a.Key == otelobserve.AttrStep {
				continue
			}
			kv = append(kv, fmt.Sprintf("%s=%s", a.Key, a.Value.String()))
		}
		slices.Sort(kv)
		if len(kv) > 0 {
			fmt.Fprintf(&b, "  {%s}", strings.Join(kv, " "))
		}
		b.WriteString("\n")
		for _, ev := range s.Events() {
			fmt.Fprintf(&b, "%s• %s %v\n", strings.Repeat("  ", depth+1), ev.Name, ev.Attributes)
		}
		for _, c := range tr.children(s) {
			walk(c, depth+1)
		}
	}
	for _, r := range tr.roots {
		walk(r, 0)
	}
	return b.String()
}
