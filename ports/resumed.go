package ports

// Resumed is an optional interface of a Process that took over a held
// connection (docs/behaviour.md#held-sessions): ResumedReceived is how
// many messages of the connection's earlier clients the runtime had
// received when it took over (the resume's count), read before anything
// is written; ok is false when no count is known.
type Resumed interface {
	ResumedReceived() (received int64, ok bool)
}
