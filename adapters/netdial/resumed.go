package netdial

import "github.com/acpdrive/acpdrive/ports"

// ResumedReceived reports, for a link started with Options.Resume, how
// many messages of the connection's earlier clients the runtime had
// received when this link took the connection over: the count the
// server's stream/resume answer gave (docs/behaviour.md#network-resume).
// ok is false for a link that was not resumed, one that is not a
// WebSocket, and one whose server gave no count (a held connection's
// runtime has received at least the initialize, so zero is none given). It is read before this side writes anything (an attach reads
// it at once): its own messages are numbered after that count.
func (p *process) ResumedReceived() (received int64, ok bool) {
	s, isWS := p.stdin.(*wsStdin)
	if !isWS || s.w.l.opts.Resume == nil {
		return 0, false
	}
	s.w.outMu.Lock()
	defer s.w.outMu.Unlock()
	return s.w.outBase, s.w.outBase > 0
}

var _ ports.Resumed = (*process)(nil)
