package refagent

import "encoding/json"

// runningTotal is what a turn of session id reports when its usage is the
// session's running total (Script.UsageRunningTotal): the turn's usage
// added, counter by counter, to what the session reported before. A usage
// that is absent or not an object of integers is returned as it is and
// leaves the total unchanged.
func (a *agent) runningTotal(id string, usage json.RawMessage) json.RawMessage {
	var turn map[string]int64
	if len(usage) == 0 || json.Unmarshal(usage, &turn) != nil || turn == nil {
		return usage
	}
	a.mu.Lock()
	s := a.sessions[id]
	if s == nil {
		a.mu.Unlock()
		return usage
	}
	if s.usage == nil {
		s.usage = map[string]int64{}
	}
	for k, v := range turn {
		s.usage[k] += v
	}
	total := make(map[string]int64, len(s.usage))
	for k, v := range s.usage {
		total[k] = v
	}
	a.mu.Unlock()
	out, err := json.Marshal(total)
	if err != nil {
		return usage
	}
	return out
}
