package app_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// fakeSource is a measurement source a vendor could write: it claims
// commands whose program is claimWord, reads runtime, and reports the
// figures queued in usage, one per turn.
type fakeSource struct {
	name, runtime, claimWord string
	noEnv                    bool           // the measurement adds nothing to the environment
	aliases                  []string       // further names Recognizes accepts (nil: no Recognizes rule)
	block                    bool           // TurnUsage waits for its ctx
	waits                    chan time.Time // told each TurnUsage's deadline, when set

	mu       sync.Mutex
	armed    int
	released int
	opened   []string
	usage    []domain.Usage // one per TurnUsage call; empty → no figure
	dirs     []string
}

// recognizingSource is a fakeSource with a Recognizes rule (a runtime
// known under several names).
type recognizingSource struct{ *fakeSource }

func (r recognizingSource) Recognizes(name string) bool {
	return name == r.runtime || slices.Contains(r.aliases, name)
}

func (f *fakeSource) Name() string        { return f.name }
func (f *fakeSource) RuntimeName() string { return f.runtime }
func (f *fakeSource) Claims(command []string) bool {
	return len(command) > 0 && command[0] == f.claimWord
}

func (f *fakeSource) Arm(context.Context) (ports.Measurement, error) {
	dir, err := os.MkdirTemp("", "fake-measure-")
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed++
	f.dirs = append(f.dirs, dir)
	return &fakeMeasurement{src: f, dir: dir}, nil
}

func (f *fakeSource) counts() (armed, released int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armed, f.released
}

type fakeMeasurement struct {
	src *fakeSource
	dir string
}

func (m *fakeMeasurement) Env() []string {
	if m.src.noEnv {
		return nil
	}
	return []string{"FAKE_MEASURE_DIR=" + m.dir}
}

func (m *fakeMeasurement) SessionOpened(id string, _ bool) {
	m.src.mu.Lock()
	defer m.src.mu.Unlock()
	m.src.opened = append(m.src.opened, id)
}

func (m *fakeMeasurement) TurnUsage(ctx context.Context, _ string) (domain.Usage, string, bool, error) {
	if m.src.waits != nil {
		deadline, _ := ctx.Deadline()
		m.src.waits <- deadline
	}
	if m.src.block {
		<-ctx.Done()
		return domain.Usage{}, "", false, ctx.Err()
	}
	m.src.mu.Lock()
	defer m.src.mu.Unlock()
	if len(m.src.usage) == 0 {
		return domain.Usage{}, "", false, nil
	}
	u := m.src.usage[0]
	m.src.usage = m.src.usage[1:]
	return u, "fake-model-1", true, nil
}

func (m *fakeMeasurement) Release() error {
	m.src.mu.Lock()
	m.src.released++
	m.src.mu.Unlock()
	return os.RemoveAll(m.dir)
}

// countingLauncher counts the starts of the in-process agent and records
// the environment each start was given; remote makes its plans remote.
type countingLauncher struct {
	inner  ports.Launcher
	remote string

	mu     sync.Mutex
	starts [][]string
}

func (c *countingLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p, err := c.inner.Prepare(req)
	if err != nil {
		return nil, err
	}
	return &countingPlan{Plan: p, l: c}, nil
}

func (c *countingLauncher) envs() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.starts...)
}

type countingPlan struct {
	ports.Plan
	l *countingLauncher
}

func (p *countingPlan) Target() ports.Target { return ports.Target{Host: p.l.remote} }

func (p *countingPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	p.l.mu.Lock()
	p.l.starts = append(p.l.starts, append([]string(nil), env...))
	p.l.mu.Unlock()
	return p.Plan.Start(ctx, env)
}

func measuredSession(t *testing.T, remote string, sources ...ports.MeasurementSource) (*harness, *countingLauncher) {
	t.Helper()
	o, rec, logs, agentLog := agentOptions(t, nil)
	cl := &countingLauncher{inner: o.Launcher, remote: remote}
	o.Launcher = cl
	o.MeasurementSources = sources
	return startWith(t, o, rec, logs, agentLog), cl
}

func TestRestartToSettle(t *testing.T) {
	usage1 := domain.Usage{InputTokens: 11, OutputTokens: 7, CacheReadTokens: 3, TotalTokens: 18}
	usage2 := domain.Usage{InputTokens: 20, OutputTokens: 5, TotalTokens: 25}

	t.Run("claimed for another runtime: relaunched without its settings", func(t *testing.T) {
		other := &fakeSource{name: "other", runtime: "some-other-runtime", claimWord: "acpdrive-reference-agent"}
		h, cl := measuredSession(t, "", other)
		envs := cl.envs()
		require.Len(t, envs, 2, "one restart")
		assert.Contains(t, strings.Join(envs[0], " "), "FAKE_MEASURE_DIR=")
		assert.Empty(t, envs[1], "the second start carries no settings of the source turned away")
		armed, released := other.counts()
		assert.Equal(t, 1, armed)
		assert.Equal(t, 1, released, "released (its temporary directory removed) before the next start")
		for _, d := range other.dirs {
			_, err := os.Stat(d)
			assert.True(t, os.IsNotExist(err), "temporary directory %s removed", d)
		}
		assert.Contains(t, h.logs.String(), "agent relaunched without usage settings meant for another runtime")
		assert.Contains(t, h.logs.String(), "name="+refagent.AgentName)
		assert.Equal(t, 1, strings.Count(h.logs.String(), `msg="agent implementation"`), "logged once")
		assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapTokenCounts))
		res := h.turn("hello")
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
		assert.Nil(t, res.Usage, "an unmeasured turn carries no figures")
		assert.Empty(t, h.rec.OfType(domain.EventTokenUsage))
	})

	t.Run("not claimed but the handshake names a measured runtime: relaunched with its settings", func(t *testing.T) {
		ref := &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "never-this", usage: []domain.Usage{usage1, usage2}}
		h, cl := measuredSession(t, "", ref)
		envs := cl.envs()
		require.Len(t, envs, 2)
		assert.Empty(t, envs[0])
		assert.Contains(t, strings.Join(envs[1], " "), "FAKE_MEASURE_DIR=")
		assert.Contains(t, h.logs.String(), "agent relaunched so its token usage can be measured: agent.command does not name the runtime it starts")
		assert.Equal(t, domain.CapOurs, h.sess.Capabilities().State(domain.CapTokenCounts))
		assert.Equal(t, []string{h.sess.ID()}, ref.opened)

		for i, want := range []domain.Usage{usage1, usage2} {
			res := h.turn("hello")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			require.NotNil(t, res.Usage, "turn %d measured", i+1)
			assert.Equal(t, want, *res.Usage)
			assert.Equal(t, "fake-model-1", res.Model)
		}
		events := h.rec.OfType(domain.EventTokenUsage)
		require.Len(t, events, 2)
		assert.Equal(t, usage1, *events[0].Usage)
		assert.Equal(t, usage2, *events[1].Usage)
	})

	t.Run("claimed and confirmed: no restart", func(t *testing.T) {
		ref := &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent", usage: []domain.Usage{usage1}}
		h, cl := measuredSession(t, "", ref)
		assert.Len(t, cl.envs(), 1)
		assert.NotContains(t, h.logs.String(), "relaunched")
		res := h.turn("hello")
		require.NotNil(t, res.Usage)
		assert.Equal(t, usage1, *res.Usage)
	})

	t.Run("a source that answers nothing for the first turn is dropped", func(t *testing.T) {
		ref := &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent"}
		h, _ := measuredSession(t, "", ref)
		assert.Equal(t, domain.CapOurs, h.sess.Capabilities().State(domain.CapTokenCounts))
		res := h.turn("hello")
		assert.Nil(t, res.Usage)
		assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapTokenCounts))
		assert.Contains(t, h.logs.String(), domain.MsgCapabilityLoweredLate)
		_, released := ref.counts()
		assert.Equal(t, 1, released)
	})

	t.Run("a remote launch is never claimed and never restarted", func(t *testing.T) {
		ref := &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent"}
		h, cl := measuredSession(t, "build-7", ref)
		assert.Len(t, cl.envs(), 1)
		assert.Empty(t, cl.envs()[0])
		armed, _ := ref.counts()
		assert.Zero(t, armed)
		assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapTokenCounts))
		assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	})
}

// TestSettleWithoutRestart: a runtime known under several names is
// recognized under any of them, and a source that needs no settings is
// swapped in the running start instead of a restart: one start.
func TestSettleWithoutRestart(t *testing.T) {
	usage := domain.Usage{InputTokens: 11, OutputTokens: 7, TotalTokens: 18}
	cases := []struct {
		name     string
		sources  func() []ports.MeasurementSource
		starts   int
		caps     domain.CapabilityState
		measured bool
		log      string
	}{
		{"claimed under its old name, the handshake reports the new one", func() []ports.MeasurementSource {
			return []ports.MeasurementSource{recognizingSource{&fakeSource{name: "renamed", runtime: "@old-scope/reference-agent",
				aliases: []string{refagent.AgentName}, claimWord: "acpdrive-reference-agent", usage: []domain.Usage{usage}}}}
		}, 1, domain.CapOurs, true, ""},
		{"claimed for another runtime, no settings: dropped in place", func() []ports.MeasurementSource {
			return []ports.MeasurementSource{&fakeSource{name: "other", runtime: "some-other-runtime", claimWord: "acpdrive-reference-agent", noEnv: true}}
		}, 1, domain.CapGap, false, ""},
		{"not claimed, the handshake names a source with no settings: armed in place", func() []ports.MeasurementSource {
			return []ports.MeasurementSource{&fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "never-this", noEnv: true, usage: []domain.Usage{usage}}}
		}, 1, domain.CapOurs, true, "without a restart"},
		{"claimed for another runtime, the named one has no settings: switched in place", func() []ports.MeasurementSource {
			return []ports.MeasurementSource{
				&fakeSource{name: "other", runtime: "some-other-runtime", claimWord: "acpdrive-reference-agent", noEnv: true},
				&fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "never-this", noEnv: true, usage: []domain.Usage{usage}},
			}
		}, 1, domain.CapOurs, true, "without a restart"},
		{"not claimed, the named source needs settings: one restart", func() []ports.MeasurementSource {
			return []ports.MeasurementSource{&fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "never-this", usage: []domain.Usage{usage}}}
		}, 2, domain.CapOurs, true, "agent relaunched so its token usage can be measured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srcs := c.sources()
			h, cl := measuredSession(t, "", srcs...)
			assert.Len(t, cl.envs(), c.starts)
			if c.starts == 1 {
				assert.NotContains(t, h.logs.String(), "relaunched")
			}
			if c.log != "" {
				assert.Contains(t, h.logs.String(), c.log)
			}
			assert.Equal(t, c.caps, h.sess.Capabilities().State(domain.CapTokenCounts))
			res := h.turn("hello")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			if c.measured {
				require.NotNil(t, res.Usage)
				assert.Equal(t, usage, *res.Usage)
			} else {
				assert.Nil(t, res.Usage)
			}
			for _, src := range srcs {
				f := src.(interface{ counts() (int, int) })
				armed, released := f.counts()
				assert.LessOrEqual(t, released, armed)
			}
		})
	}
}

// TestCancelledTurnWaitsBriefly: the figures of a turn that did not
// complete are waited for at most incompleteTurnWait (1 s), not the read
// budget: the runtime may write none.
func TestCancelledTurnWaitsBriefly(t *testing.T) {
	waits := make(chan time.Time, 4)
	ref := &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent", block: true, waits: waits}
	o, rec, logs, agentLog := agentOptions(t, nil)
	o.MeasurementSources = []ports.MeasurementSource{ref}
	o.Settings.ReadTimeout = time.Hour
	h := startWith(t, o, rec, logs, agentLog)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.rec.On(func(ev domain.Event) {
		if ev.Type == domain.EventMessageChunk {
			cancel()
		}
	})
	before := time.Now()
	res := h.sess.Turn(ctx, "#wait-cancel")
	require.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	deadline := <-waits
	assert.Less(t, deadline.Sub(before), time.Minute, "bounded by 1 s, not the hour of read budget")
	assert.Nil(t, res.Usage)
	assert.Equal(t, domain.CapOurs, h.sess.Capabilities().State(domain.CapTokenCounts), "an unmeasured cancelled turn never drops the source")
}

// TestProbeNamesTheSources: probe reports which source would claim the
// command and which measures the runtime the handshake named.
func TestProbeNamesTheSources(t *testing.T) {
	o, _, _, _ := agentOptions(t, nil)
	o.MeasurementSources = []ports.MeasurementSource{
		&fakeSource{name: "claims-it", runtime: "another-runtime", claimWord: "acpdrive-reference-agent"},
		&fakeSource{name: "reads-it", runtime: refagent.AgentName, claimWord: "never"},
	}
	r, err := app.Probe(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "claims-it", r.ClaimedBy)
	assert.Equal(t, "reads-it", r.MeasuredBy)
	assert.Equal(t, domain.CapOurs, r.Capabilities.State(domain.CapTokenCounts),
		"the record a measured session would start with, not a gap beside \"measured by\"")
}
