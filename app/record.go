package app

import (
	"log/slog"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
)

// capRecord is a session's capability record (docs/behaviour.md#capabilities):
// every part that learns a capability is missing lowers it here, and the
// once-per-session notice is taken from it by the first turn. It owns the
// record and whether the notice went out.
type capRecord struct {
	log *slog.Logger

	mu         sync.Mutex // guards the fields below
	caps       domain.Capabilities
	noticeSent bool
}

func newCapRecord(log *slog.Logger) *capRecord {
	return &capRecord{log: log, caps: domain.NewCapabilities(false, false)}
}

// reset starts the record over for a launch: remote or local, measured or not.
func (r *capRecord) reset(remote, measured bool) {
	r.mu.Lock()
	r.caps = domain.NewCapabilities(remote, measured)
	r.mu.Unlock()
}

// measuredInPlace records that a source the handshake confirmed measures
// this start without a restart: token counts is ours, as a restarted start
// would have begun (docs/behaviour.md#token-accounting). It runs before the
// session exists, so nothing was noticed yet.
func (r *capRecord) measuredInPlace(remote bool) {
	r.mu.Lock()
	r.caps = measuredRecord(r.caps, remote)
	r.mu.Unlock()
}

// measuredByProtocol records that the protocol carried a turn's figure:
// token counts is then delivered by the protocol, whatever the start
// assumed (docs/behaviour.md#token-accounting).
func (r *capRecord) measuredByProtocol() {
	r.mu.Lock()
	r.caps.MeasuredByProtocol()
	r.mu.Unlock()
}

// lower lowers an entry. Once the once-per-session notice went out, a
// lowering is logged at Warn instead of producing a second notice.
func (r *capRecord) lower(label domain.CapabilityLabel) {
	r.mu.Lock()
	changed := r.caps.Lower(label)
	late := changed && r.noticeSent
	r.mu.Unlock()
	if late {
		r.log.Warn(domain.MsgCapabilityLoweredLate, "capability", string(label))
	}
}

// confirm marks an entry confirmed.
func (r *capRecord) confirm(label domain.CapabilityLabel) {
	r.mu.Lock()
	r.caps.Confirm(label)
	r.mu.Unlock()
}

// snapshot returns a copy of the record.
func (r *capRecord) snapshot() domain.Capabilities {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.caps
}

// takeNotice returns the record for the notice of the first turn and
// records that the notice went out.
func (r *capRecord) takeNotice() domain.Capabilities {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noticeSent = true
	return r.caps
}
