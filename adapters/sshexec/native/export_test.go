package native

// SetPreambleCut makes l send its preamble n bytes short (tests only).
func SetPreambleCut(l *Launcher, n int) { l.preambleCut = n }
