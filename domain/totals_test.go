package domain_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

func TestTotalsAddAndString(t *testing.T) {
	var tot domain.Totals
	assert.Equal(t, "0 turn(s); tokens: not measured", tot.String())
	u := domain.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}
	tot.Add(domain.TurnResult{Usage: &u, Cost: &domain.Cost{Amount: 0.5, Currency: "USD"}})
	tot.Add(domain.TurnResult{Cost: &domain.Cost{Amount: 1, Currency: "EUR"}})
	tot.Add(domain.TurnResult{Usage: &u, Cost: &domain.Cost{Amount: 0.25, Currency: "USD"}})
	assert.Equal(t, 3, tot.Turns)
	assert.Equal(t, 2, tot.Measured)
	assert.Equal(t, u.Add(u), tot.Usage)
	assert.Equal(t, map[string]float64{"USD": 0.75, "EUR": 1}, tot.Cost, "never summed across currencies")
	assert.Equal(t, "3 turn(s); tokens: 20 in, 4 out, cache 0 read / 0 written, 24 total over 2 measured turn(s); cost 1.0000 EUR; cost 0.7500 USD", tot.String())
	c := tot.Clone()
	c.Cost["USD"] = 9
	assert.InDelta(t, 0.75, tot.Cost["USD"], 1e-12, "a clone shares nothing")
}

func TestCapabilitiesPrint(t *testing.T) {
	c := domain.NewCapabilities(false, false)
	c.Confirm(domain.CapToolServers)
	assert.Equal(t, "tool servers: protocol (confirmed)\ntoken counts: gap\nsession continuation: protocol\nagent version: protocol", fmt.Sprint(c))
}

func TestTurnResultEventOneVocabulary(t *testing.T) {
	res := domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult))
	ev := res.Event()
	assert.Equal(t, domain.EventTurnEndedWithError, ev.Type)
	assert.Equal(t, domain.OutcomeFailed, ev.Outcome)
	ev = domain.Disposition(domain.StopRefusal, domain.OverrideNone, "").Event()
	assert.Equal(t, domain.EventTurnFailed, ev.Type)
	assert.Equal(t, domain.OutcomeFailed, ev.Outcome)
	ev = domain.Disposition(domain.StopEndTurn, domain.OverrideNone, "").Event()
	assert.Equal(t, domain.EventTurnCompleted, ev.Type)
	assert.Equal(t, domain.OutcomeCompleted, ev.Outcome)
}
