package native

// SetPreambleCut makes l send its preamble n bytes short (tests only).
func SetPreambleCut(l *Launcher, n int) { l.preambleCut = n }

// KillRounds is the most rounds the remote group kill makes.
const KillRounds = killRounds
