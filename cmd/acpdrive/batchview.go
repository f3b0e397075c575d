package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// What a batch shows (docs/behaviour.md#batch): with --json one line per
// finished task; on a terminal a live table, redrawn in place; otherwise
// one line of text per finished task.

// Task states as the live table shows them.
const (
	stateQueued    = "queued"
	stateStarting  = "starting"
	stateRunning   = "running"
	stateCompleted = "completed"
	stateFailed    = "failed"
	// stateCancelled: a signal cancelled the task's running turn;
	// stateNotStarted: a signal kept the task from starting.
	stateCancelled  = "cancelled"
	stateNotStarted = "not started"
)

// tableRow is one task's row of the live table.
type tableRow struct {
	ID, Host, State string
	// Turn is the turn running or last run, from 1; Turns the task's
	// prompts.
	Turn, Turns int
	// Tokens is the measured total so far, Measured whether any turn was.
	Tokens   int64
	Measured bool
	Cost     []domain.Cost
	// Elapsed is the time since the task started (0: not started).
	Elapsed time.Duration
}

// tableColumns are the live table's headings.
var tableColumns = []string{"TASK", "HOST", "STATE", "TURN", "TOKENS", "COST", "ELAPSED"}

// Widest cell of the task and host columns, in runes.
const (
	tableIDCut   = 28
	tableHostCut = 24
)

// renderBatchTable renders the live table: a heading, one row per task
// and a closing count, each line at most width runes (0: no bound). When
// limit (> 0) is smaller than the number of rows, the rows shown are the
// running ones first, then failed, completed and queued ones, in file
// order; the count says how many are not shown. States are coloured by
// colour.
func renderBatchTable(rows []tableRow, width, limit int, colour palette) []string {
	shown := rows
	if limit > 0 && len(rows) > limit {
		shown = pickRows(rows, limit)
	}
	cells := [][]string{tableColumns}
	for _, r := range shown {
		cells = append(cells, rowCells(r))
	}
	widths := make([]int, len(tableColumns))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	lines := make([]string, 0, len(cells)+1)
	for n, row := range cells {
		var plain, painted strings.Builder
		for i, c := range row {
			if i > 0 {
				plain.WriteString("  ")
				painted.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			cell := c + pad
			if i == 4 { // tokens: right-aligned
				cell = pad + c
			}
			plain.WriteString(cell)
			if i == 2 && n > 0 {
				painted.WriteString(colour.paint(stateColour(c), c) + pad)
			} else {
				painted.WriteString(cell)
			}
		}
		text := strings.TrimRight(plain.String(), " ")
		switch {
		case width > 0 && utf8.RuneCountInString(text) > width:
			lines = append(lines, domain.TruncateRunes(text, width))
		case n == 0:
			lines = append(lines, colour.paint(sgrBold, text))
		default:
			lines = append(lines, strings.TrimRight(painted.String(), " "))
		}
	}
	count := countText(rows)
	if hidden := len(rows) - len(shown); hidden > 0 {
		count += fmt.Sprintf(" (%d not shown)", hidden)
	}
	if width > 0 {
		count = domain.TruncateRunes(count, width)
	}
	return append(lines, count)
}

// rowCells is a row's cells, as the columns say.
func rowCells(r tableRow) []string {
	host := r.Host
	if host == "" {
		host = "local"
	}
	turn, tokens, cost, elapsed := "-", "-", "-", "-"
	if r.Turn > 0 {
		turn = fmt.Sprintf("%d/%d", r.Turn, r.Turns)
	}
	if r.Measured {
		tokens = strconv.FormatInt(r.Tokens, 10)
	}
	if len(r.Cost) > 0 {
		var parts []string
		for _, c := range r.Cost {
			parts = append(parts, domain.CostText(c))
		}
		cost = strings.Join(parts, ", ")
	}
	if r.Elapsed > 0 {
		elapsed = r.Elapsed.Round(100 * time.Millisecond).String()
	}
	if r.State == stateQueued {
		host = "-"
	}
	return []string{domain.TruncateRunes(r.ID, tableIDCut), domain.TruncateRunes(host, tableHostCut), r.State, turn, tokens, cost, elapsed}
}

// stateColour is the colour of a state.
func stateColour(state string) string {
	switch state {
	case stateCompleted:
		return sgrGreen
	case stateFailed:
		return sgrRed
	case stateCancelled:
		return sgrYellow
	case stateRunning, stateStarting:
		return sgrYellow
	}
	return sgrDim
}

// pickRows chooses limit rows, by state (running, then failed, completed,
// queued), kept in file order.
func pickRows(rows []tableRow, limit int) []tableRow {
	rank := map[string]int{stateStarting: 0, stateRunning: 0, stateFailed: 1, stateCancelled: 1, stateCompleted: 2, stateQueued: 3, stateNotStarted: 3}
	keep := make([]bool, len(rows))
	left := limit
	for r := 0; r <= 3 && left > 0; r++ {
		for i, row := range rows {
			if left > 0 && rank[row.State] == r {
				keep[i] = true
				left--
			}
		}
	}
	out := make([]tableRow, 0, limit)
	for i, row := range rows {
		if keep[i] {
			out = append(out, row)
		}
	}
	return out
}

// countText is the table's closing line: how many tasks are in each state.
func countText(rows []tableRow) string {
	n := map[string]int{}
	for _, r := range rows {
		n[r.State]++
	}
	parts := []string{plural(len(rows), "task", "tasks")}
	for _, s := range []string{stateRunning, stateStarting, stateQueued, stateCompleted, stateFailed, stateCancelled, stateNotStarted} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return parts[0] + ": " + strings.Join(parts[1:], ", ")
}

// batchBoard follows every task of a batch and shows it: JSON lines, text
// lines, or the live table on a terminal.
type batchBoard struct {
	json bool
	out  io.Writer
	errw io.Writer

	mu    sync.Mutex
	rows  []*boardRow
	byID  map[string]*boardRow
	held  []string // warnings held while the table is drawn
	fails []string // failed tasks' lines, printed under the final table
	table *liveTable
	// ended counts the finished tasks by their final state, for the
	// closing summary.
	ended map[string]int
}

// boardRow is one task as the board follows it.
type boardRow struct {
	row          tableRow
	began, ended time.Time
}

func newBatchBoard(tasks []batchTask, jsonOut bool, stdout, stderr io.Writer) *batchBoard {
	b := &batchBoard{json: jsonOut, out: stdout, errw: stderr, byID: map[string]*boardRow{}, ended: map[string]int{}}
	for _, t := range tasks {
		r := &boardRow{row: tableRow{ID: t.ID, State: stateQueued, Turns: len(t.Prompts)}}
		b.rows = append(b.rows, r)
		b.byID[t.ID] = r
	}
	if !jsonOut && isTerminal(stdout) {
		width, height := terminalSize(stdout)
		b.table = newLiveTable(stdout, b.snapshot, width, height, palette{on: colourWanted()})
	}
	return b
}

// snapshot is the rows as they stand at now.
func (b *batchBoard) snapshot(now time.Time) []tableRow {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]tableRow, len(b.rows))
	for i, r := range b.rows {
		out[i] = r.row
		switch {
		case r.began.IsZero():
		case r.ended.IsZero():
			out[i].Elapsed = now.Sub(r.began)
		default:
			out[i].Elapsed = r.ended.Sub(r.began)
		}
		out[i].Cost = append([]domain.Cost(nil), r.row.Cost...)
	}
	return out
}

// update changes a task's row under the board's lock.
func (b *batchBoard) update(id string, f func(r *boardRow)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.byID[id]; ok {
		f(r)
	}
}

// starting: the task left the queue.
func (b *batchBoard) starting(id string) {
	b.update(id, func(r *boardRow) { r.row.State, r.began = stateStarting, time.Now() })
}

// running: the task's session started on host.
func (b *batchBoard) running(id, host string, turns int) {
	b.update(id, func(r *boardRow) { r.row.State, r.row.Host, r.row.Turns = stateRunning, host, turns })
}

// turn: the task's turn n began.
func (b *batchBoard) turn(id string, n int) { b.update(id, func(r *boardRow) { r.row.Turn = n }) }

// turnEnded: the task's figures after a turn.
func (b *batchBoard) turnEnded(id string, budget runBudgets) {
	b.update(id, func(r *boardRow) {
		r.row.Measured = budget.tokens.Measured > 0
		r.row.Tokens = budget.tokens.Used.TotalTokens
		r.row.Cost = append([]domain.Cost(nil), budget.cost.Spent...)
	})
}

// warn shows a remark about the batch on standard error, after the table
// when one is drawn.
func (b *batchBoard) warn(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.table != nil {
		b.held = append(b.held, text)
		return
	}
	fmt.Fprintf(b.errw, "acpdrive batch: %s\n", text)
}

// finish shows a finished task: its JSON line, its line of text, or its
// row's final state.
func (b *batchBoard) finish(line batchLine) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.byID[line.ID]; ok {
		r.ended = time.Now()
		if r.began.IsZero() {
			r.began = r.ended
		}
		r.row.State = lineState(line)
		if line.Host != "" {
			r.row.Host = line.Host
		}
	}
	b.ended[lineState(line)]++
	switch {
	case b.json:
		writeJSON(b.out, line)
	case b.table != nil:
		if !line.Completed {
			b.fails = append(b.fails, taskText(line))
		}
	default:
		fmt.Fprintln(b.out, taskText(line))
	}
}

// lineState is a finished task's final state: completed, failed,
// cancelled (a signal cancelled its turn) or not started (a signal kept
// it from starting).
func lineState(line batchLine) string {
	switch {
	case line.Completed:
		return stateCompleted
	case line.NotStarted:
		return stateNotStarted
	case line.ErrorKind == string(domain.KindTurnCancelled):
		return stateCancelled
	}
	return stateFailed
}

// taskText is a finished task's line of text.
func taskText(line batchLine) string {
	state := lineState(line)
	if !line.Completed {
		state += ": " + oneLine(line.Message)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %s: %s (%s", line.ID, state, plural(len(line.TurnResults), "turn", "turns"))
	if line.SessionID != "" {
		fmt.Fprintf(&b, ", session %s", line.SessionID)
	}
	if line.Host != "" {
		fmt.Fprintf(&b, " on %s", line.Host)
	}
	if line.Usage != nil {
		fmt.Fprintf(&b, "; tokens: %d", line.Usage.TotalTokens)
	}
	for _, c := range line.Cost {
		fmt.Fprintf(&b, "; cost %s", domain.CostText(c))
	}
	if line.Result != nil {
		fmt.Fprintf(&b, "; result %s", compactJSON(line.Result))
	} else if line.ResultMissing != "" {
		fmt.Fprintf(&b, "; result_missing: %s", oneLine(line.ResultMissing))
	}
	b.WriteString(")")
	return b.String()
}

// compactJSON is v on one line.
func compactJSON(v json.RawMessage) string {
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(v)
	}
	return strings.TrimSpace(out.String())
}

// batchResultLine is batch --json's last line: the tasks by final state.
type batchResultLine struct {
	Type       string `json:"type"`
	Tasks      int    `json:"tasks"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
	Cancelled  int    `json:"cancelled"`
	NotStarted int    `json:"not_started"`
}

// interrupted acknowledges a SIGINT or SIGTERM at once, on standard error.
func (b *batchBoard) interrupted() {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintln(b.errw, "acpdrive batch: interrupt: cancelling the running tasks' turns; no further task starts")
}

// close draws the final table (every row) and what was held for after it,
// then the closing summary: the tasks by final state.
func (b *batchBoard) close() {
	if b.table != nil {
		b.table.stop()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.table != nil {
		for _, f := range b.fails {
			fmt.Fprintln(b.out, f)
		}
		for _, w := range b.held {
			fmt.Fprintf(b.errw, "acpdrive batch: %s\n", w)
		}
	}
	sum := batchResultLine{Type: "batch_result", Tasks: len(b.rows), Completed: b.ended[stateCompleted],
		Failed: b.ended[stateFailed], Cancelled: b.ended[stateCancelled], NotStarted: b.ended[stateNotStarted]}
	if b.json {
		writeJSON(b.out, sum)
		return
	}
	fmt.Fprintf(b.out, "batch: %s: %d completed, %d failed, %d cancelled, %d not started\n",
		plural(sum.Tasks, "task", "tasks"), sum.Completed, sum.Failed, sum.Cancelled, sum.NotStarted)
}

// liveTable redraws the table in place every 200 ms: the cursor goes back
// up over the lines drawn last, each line is cleared and written again,
// and whatever the last drawing left below is erased.
type liveTable struct {
	w        io.Writer
	rows     func(time.Time) []tableRow
	width    int
	limit    int
	colour   palette
	drawn    int
	done     chan struct{}
	finished sync.WaitGroup
}

// tableFrame is the number of lines around the rows: the heading, the
// count and one spare for the cursor's line.
const tableFrame = 3

func newLiveTable(w io.Writer, rows func(time.Time) []tableRow, width, height int, colour palette) *liveTable {
	limit := 20
	if height > 0 {
		limit = max(height-tableFrame, 3)
	}
	t := &liveTable{w: w, rows: rows, width: width, limit: limit, colour: colour, done: make(chan struct{})}
	t.draw(t.limit)
	t.finished.Add(1)
	go func() {
		defer t.finished.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-t.done:
				return
			case <-tick.C:
				t.draw(t.limit)
			}
		}
	}()
	return t
}

// draw writes one frame over the last one.
func (t *liveTable) draw(limit int) {
	lines := renderBatchTable(t.rows(time.Now()), t.width, limit, t.colour)
	var b strings.Builder
	if t.drawn > 0 {
		fmt.Fprintf(&b, "\r\033[%dA", t.drawn)
	}
	for _, l := range lines {
		b.WriteString("\r\033[2K")
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString("\033[J")
	_, _ = io.WriteString(t.w, b.String())
	t.drawn = len(lines)
}

// stop ends the redrawing and draws the final table with every row.
func (t *liveTable) stop() {
	close(t.done)
	t.finished.Wait()
	t.draw(0)
}

// terminalSize is the size of the terminal w is, 0 where it cannot be
// known.
func terminalSize(w io.Writer) (width, height int) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, 0
	}
	return fdSize(f.Fd())
}

// fleetNotice shows what the batch's fleet tells a person: a host left
// out for the rest of the batch, a runtime whose tasks get a process each.
func (b *batchBoard) fleetNotice(n app.FleetNotice) {
	switch n.Kind {
	case app.NoticeHostDown:
		b.warn(fmt.Sprintf("SSH host %s could not be reached; no further task is placed there: %s", n.Host, failureText(n.Err)))
	case app.NoticeCannotShare:
		b.warn(fmt.Sprintf("%s does not advertise session/close: its tasks run on a process each", strings.Join(n.Command, " ")))
	default:
		b.warn(n.Text())
	}
}
