package otelobserve

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/acpdrive/acpdrive/domain"
)

// Spend names: what measured a turn, its cost and the context window at
// its end (docs/behaviour.md#observability, #token-accounting).
const (
	// AttrUsageSource names what measured the turn's tokens
	// (acp_prompt_result, acp_state_update, or a journal source).
	AttrUsageSource = "acpdrive.usage.source"
	// AttrCostAmount is the turn's cost (span attribute).
	AttrCostAmount = "acpdrive.cost.amount"
	// AttrCostCurrency is the currency of the turn's cost (span attribute
	// and the attribute of acpdrive.cost).
	AttrCostCurrency = "acpdrive.cost.currency"
	// AttrContextUsed is the context window's use at the turn's end.
	AttrContextUsed = "acpdrive.context.used"
	// AttrContextSize is the context window's size.
	AttrContextSize = "acpdrive.context.size"

	// MetricCost counts the turns' cost by AttrCostCurrency.
	MetricCost = "acpdrive.cost"
	// MetricContextUsed is the context window's use at each turn's end.
	MetricContextUsed = "acpdrive.context.used"
	// MetricContextSize is the context window's size at each turn's end.
	MetricContextSize = "acpdrive.context.size"
)

// spendInstruments are the cost and context metrics.
type spendInstruments struct {
	cost        metric.Float64Counter
	contextUsed metric.Int64Gauge
	contextSize metric.Int64Gauge
}

func newSpendInstruments(m metric.Meter) (spendInstruments, error) {
	var si spendInstruments
	var err1, err2, err3 error
	si.cost, err1 = m.Float64Counter(MetricCost, metric.WithUnit("{currency_unit}"),
		metric.WithDescription("The turns' cost from the session's cumulative cost, by currency."))
	si.contextUsed, err2 = m.Int64Gauge(MetricContextUsed, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens in the context window at a turn's end."))
	si.contextSize, err3 = m.Int64Gauge(MetricContextSize, metric.WithUnit("{token}"),
		metric.WithDescription("The context window's size at a turn's end."))
	return si, errors.Join(err1, err2, err3)
}

// spend records the turn's source, cost and context use: span attributes
// returned, metrics recorded (model as the metrics' attribute).
func (si spendInstruments) spend(res domain.TurnResult) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if res.Source != "" {
		attrs = append(attrs, attribute.String(AttrUsageSource, res.Source))
	}
	ctx := context.Background()
	if c := res.Cost; c != nil {
		attrs = append(attrs, attribute.Float64(AttrCostAmount, c.Amount), attribute.String(AttrCostCurrency, c.Currency))
		if c.Amount > 0 {
			si.cost.Add(ctx, c.Amount, metric.WithAttributes(attribute.String(AttrCostCurrency, c.Currency)))
		}
	}
	if u := res.Context; u != nil {
		attrs = append(attrs, attribute.Int64(AttrContextUsed, int64(u.Used)), attribute.Int64(AttrContextSize, int64(u.Size)))
		si.contextUsed.Record(ctx, int64(u.Used))
		si.contextSize.Record(ctx, int64(u.Size))
	}
	return attrs
}
