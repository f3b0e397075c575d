package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

// TestRenderBatchTable: the live table's rows, columns, cuts and count
// for the states a task goes through (docs/behaviour.md#batch).
func TestRenderBatchTable(t *testing.T) {
	usd := []domain.Cost{{Amount: 0.25, Currency: "USD"}}
	rows := []tableRow{
		{ID: "fix-1", State: stateQueued, Turns: 2},
		{ID: "fix-2", Host: "build1", State: stateRunning, Turn: 1, Turns: 2, Elapsed: 1500 * time.Millisecond},
		{ID: "fix-3", State: stateCompleted, Turn: 2, Turns: 2, Tokens: 3014, Measured: true, Cost: usd, Elapsed: 12 * time.Second},
		{ID: "fix-4", State: stateFailed, Turn: 1, Turns: 1, Elapsed: 300 * time.Millisecond},
		{ID: "fix-5", State: stateStarting, Turns: 1, Elapsed: 50 * time.Millisecond},
	}
	for _, tc := range []struct {
		name         string
		rows         []tableRow
		width, limit int
		want         []string
	}{
		{"every state", rows, 0, 0, []string{
			"TASK   HOST    STATE      TURN  TOKENS  COST        ELAPSED",
			"fix-1  -       queued     -          -  -           -",
			"fix-2  build1  running    1/2        -  -           1.5s",
			"fix-3  local   completed  2/2     3014  0.2500 USD  12s",
			"fix-4  local   failed     1/1        -  -           300ms",
			"fix-5  local   starting   -          -  -           100ms",
			"5 tasks: 1 running, 1 starting, 1 queued, 1 completed, 1 failed",
		}},
		{"cut to the width", rows[1:2], 20, 0, []string{
			"TASK   HOST    STAT…",
			"fix-2  build1  runn…",
			"1 task: 1 running",
		}},
		{"more rows than the limit: running first, then failed, completed, queued; in file order", rows, 0, 3, []string{
			"TASK   HOST    STATE     TURN  TOKENS  COST  ELAPSED",
			"fix-2  build1  running   1/2        -  -     1.5s",
			"fix-4  local   failed    1/1        -  -     300ms",
			"fix-5  local   starting  -          -  -     100ms",
			"5 tasks: 1 running, 1 starting, 1 queued, 1 completed, 1 failed (2 not shown)",
		}},
		{"a long id is cut", []tableRow{{ID: strings.Repeat("x", 40), State: stateQueued, Turns: 1}}, 0, 0, []string{
			"TASK                          HOST  STATE   TURN  TOKENS  COST  ELAPSED",
			strings.Repeat("x", 27) + "…  -     queued  -          -  -     -",
			"1 task: 1 queued",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, renderBatchTable(tc.rows, tc.width, tc.limit, palette{}))
		})
	}
}

// TestRenderBatchTableColour: the heading is bold and each state has its
// colour, the columns still aligned as without colour.
func TestRenderBatchTableColour(t *testing.T) {
	rows := []tableRow{
		{ID: "a", State: stateCompleted, Turn: 1, Turns: 1, Elapsed: time.Second},
		{ID: "b", State: stateFailed, Turn: 1, Turns: 1, Elapsed: time.Second},
		{ID: "c", State: stateRunning, Turn: 1, Turns: 1, Elapsed: time.Second},
	}
	got := renderBatchTable(rows, 0, 0, palette{on: true})
	plain := renderBatchTable(rows, 0, 0, palette{})
	assert.Equal(t, "\x1b[1m"+plain[0]+"\x1b[0m", got[0])
	assert.Equal(t, "a     local  \x1b[32mcompleted\x1b[0m  1/1        -  -     1s", got[1])
	assert.Equal(t, "b     local  \x1b[31mfailed\x1b[0m     1/1        -  -     1s", got[2])
	assert.Equal(t, "c     local  \x1b[33mrunning\x1b[0m    1/1        -  -     1s", got[3])
	for i := range plain {
		assert.Equal(t, plain[i], sgr.ReplaceAllString(got[i], ""))
	}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")
