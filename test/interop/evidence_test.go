//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

// The evidence of which updates and notifications each runtime row sent
// in the suite and how acpdrive rendered them: every rig of a runtime row
// logs, when its test ends, one line
//
//	evidence row=<row> test=<test> wire=<kind>×<n>,… events=<type>[<source>]×<n>,…
//
// over all its phases (library sessions; a CLI run's events stay in its
// own output). `go test -v` output collects into one table per row.

// logEvidenceAtEnd registers the evidence line of the rig's test.
func logEvidenceAtEnd(t testing.TB, row string, r *rig) {
	t.Cleanup(func() {
		wire, events := evidenceOf(r)
		if len(wire) == 0 && len(events) == 0 {
			return
		}
		t.Logf("evidence row=%s test=%s wire=%s events=%s", row, t.Name(), counted(wire), counted(events))
	})
}

// evidenceOf lists the session/update kinds (agent_message_chunk marked
// informational apart) and other notifications the runtime sent, and the
// events acpdrive emitted (runtime_notice with its source), in every phase.
func evidenceOf(r *rig) (wire, events []string) {
	wires := []*wireLog{r.wire}
	recs := [][]domain.Event{r.rec.All()}
	for _, p := range r.past {
		wires = append(wires, p.wire)
		recs = append(recs, p.rec.All())
	}
	for _, w := range wires {
		for _, m := range w.messages() {
			if m.Out || m.Method == "" || len(m.ID) > 0 {
				continue
			}
			k := m.updateKind()
			if k == "" {
				k = m.Method
			} else if k == "agent_message_chunk" && informationalChunk(m.Params) {
				k += "(informational)"
			}
			wire = append(wire, k)
		}
	}
	for _, evs := range recs {
		for _, ev := range evs {
			k := string(ev.Type)
			if ev.Notice != nil {
				k += "[" + ev.Notice.Source + "]"
			}
			events = append(events, k)
		}
	}
	return wire, events
}

// informationalChunk reports whether a chunk's params carry the Claude
// adapter's informational mark.
func informationalChunk(params json.RawMessage) bool {
	return strings.Contains(string(params), `"kind":"informational"`)
}

// counted renders values as "value×n" in name order.
func counted(values []string) string {
	n := map[string]int{}
	for _, v := range values {
		n[v]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, n[k]))
	}
	return strings.Join(parts, ",")
}
