package otelobserve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// TestTurnSpend: a turn's source, cost and context window are span
// attributes and metrics (acpdrive.cost by currency, acpdrive.context.used
// and .size as gauges).
func TestTurnSpend(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	so.Started(ports.SessionInfo{At: ms(1), SessionID: "s-1", Agent: domain.AgentInfo{Name: "acme"}})
	for i, c := range []struct {
		cost *domain.Cost
		used uint64
	}{{&domain.Cost{Amount: 0.25, Currency: "USD"}, 3014}, {&domain.Cost{Amount: 0.5, Currency: "USD"}, 6028}} {
		so.TurnStarted(ms(2 + 2*i))
		so.TurnEnded(ms(3+2*i), domain.TurnResult{Outcome: domain.OutcomeCompleted, StopReason: "end_turn",
			Usage: &domain.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}, Source: domain.SourcePromptResult,
			Cost: c.cost, Context: &domain.ContextUsage{Used: c.used, Size: 1000000}})
	}
	so.Ended(ports.SessionEnd{At: ms(9), Started: true})

	turns := newTree(tel.spans.Ended()).named(otelobserve.SpanTurn)
	require.Len(t, turns, 2)
	a := attrMap(turns[1].Attributes())
	assert.Equal(t, domain.SourcePromptResult, a[otelobserve.AttrUsageSource].AsString())
	assert.Equal(t, 0.5, a[otelobserve.AttrCostAmount].AsFloat64())
	assert.Equal(t, "USD", a[otelobserve.AttrCostCurrency].AsString())
	assert.Equal(t, int64(6028), a[otelobserve.AttrContextUsed].AsInt64())
	assert.Equal(t, int64(1000000), a[otelobserve.AttrContextSize].AsInt64())

	m := tel.metrics(t)
	cost, ok := m[otelobserve.MetricCost].Data.(metricdata.Sum[float64])
	require.True(t, ok, "%T", m[otelobserve.MetricCost].Data)
	require.Len(t, cost.DataPoints, 1)
	assert.InDelta(t, 0.75, cost.DataPoints[0].Value, 1e-12)
	used, ok := m[otelobserve.MetricContextUsed].Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%T", m[otelobserve.MetricContextUsed].Data)
	require.Len(t, used.DataPoints, 1)
	assert.Equal(t, int64(6028), used.DataPoints[0].Value, "the last turn's")
	size, ok := m[otelobserve.MetricContextSize].Data.(metricdata.Gauge[int64])
	require.True(t, ok)
	assert.Equal(t, int64(1000000), size.DataPoints[0].Value)
}
