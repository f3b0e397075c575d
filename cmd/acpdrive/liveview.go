package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// The live view (docs/behaviour.md#cli): what a person sees beside the
// reply while a turn runs: a header per prompt, the agent's thought and
// plan, the running tool, in colour on a terminal.

// palette colours a person's output on a terminal; off, it returns the
// text as it is.
type palette struct{ on bool }

// colourWanted reports whether output to a terminal is coloured: not
// when NO_COLOR is set (to anything) or TERM is dumb.
func colourWanted() bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return os.Getenv("TERM") != "dumb"
}

// SGR codes used.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
)

func (c palette) paint(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// thoughtCut is how much of a thought a person sees without --verbose.
const thoughtCut = 160

// plural is "1 tool call", "2 tool calls".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// turnStart prints the header of a prompt's turn on a terminal.
func (p *printer) turnStart(n int, prompt string) {
	if p.json || p.quiet || !p.eager {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done()
	p.clearStatus()
	p.endLine()
	fmt.Fprintln(p.out, p.colour.paint(sgrBold+";"+sgrCyan, "▶ turn "+fmt.Sprint(n)+": "+domain.TruncateRunes(oneLine(prompt), 70)))
}

// toolStarted notes a running tool (app.Options.OnToolStart): the status
// line shows it, with its kind, title and time so far.
func (p *printer) toolStarted(id string, kind domain.ToolKind, title string) {
	if p.json {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running = map[string]runningTool{}
	}
	p.running[id] = runningTool{kind: string(kind), title: title, began: time.Now()}
	p.latestTool = id
	p.showRunning()
}

// toolEnded forgets a tool that reported its end.
func (p *printer) toolEnded(id string) {
	delete(p.running, id)
	if p.latestTool == id {
		p.latestTool = ""
		for other := range p.running {
			p.latestTool = other
		}
	}
	p.showRunning()
}

// showRunning hands the running tool to the status line; p.mu is held.
func (p *printer) showRunning() {
	if p.status == nil {
		return
	}
	t, ok := p.running[p.latestTool]
	if !ok {
		p.status.running("", time.Time{})
		return
	}
	label := "⚙ " + t.kind
	if t.title != "" {
		label += ": " + t.title
	}
	if n := len(p.running); n > 1 {
		label += fmt.Sprintf(" (+%d more)", n-1)
	}
	p.status.running(label, t.began)
}

// runningTool is a tool call announced and not yet ended.
type runningTool struct {
	kind, title string
	began       time.Time
}

// thoughtChunk adds a chunk of the agent's thought; it is printed once the
// thought ends (flushThought). p.mu is held.
func (p *printer) thoughtChunk(text string) {
	p.thinking = true
	p.thought.WriteString(text)
	if p.status != nil {
		p.status.update("thinking: "+p.thought.String(), p.tools)
	}
}

// flushThought prints the thought gathered so far: one line, cut, or
// whole with --verbose. p.mu is held.
func (p *printer) flushThought() {
	if !p.thinking {
		return
	}
	text := strings.TrimSpace(p.thought.String())
	p.thinking = false
	p.thought.Reset()
	p.endLine()
	if p.verbose {
		text = strings.ReplaceAll(text, "\n", "\n  ")
	} else {
		text = domain.TruncateRunes(oneLine(text), thoughtCut)
	}
	if text == "" {
		text = "(no text)"
	}
	fmt.Fprintln(p.out, p.colour.paint(sgrDim, "· thought: "+text))
}

// planMarks are the marks of a plan entry's status.
var planMarks = map[string]string{"completed": "✓", "in_progress": "▸", "pending": "○"}

// printPlan prints the agent's plan: each entry with its status. p.mu is
// held.
func (p *printer) printPlan(entries []domain.PlanEntry) {
	p.endLine()
	done := 0
	for _, e := range entries {
		if e.Status == "completed" {
			done++
		}
	}
	fmt.Fprintln(p.out, p.colour.paint(sgrDim, fmt.Sprintf("· plan (%d of %d done):", done, len(entries))))
	for _, e := range entries {
		mark, ok := planMarks[e.Status]
		if !ok {
			mark = "·"
		}
		line := "  " + mark + " " + domain.TruncateRunes(oneLine(e.Content), 100)
		switch e.Status {
		case "completed":
			line = p.colour.paint(sgrGreen, line)
		case "in_progress":
			line = p.colour.paint(sgrYellow, line)
		default:
			line = p.colour.paint(sgrDim, line)
		}
		fmt.Fprintln(p.out, line)
	}
}
