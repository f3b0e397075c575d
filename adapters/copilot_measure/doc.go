// Package copilot_measure implements ports.MeasurementSource for GitHub
// Copilot CLI (@github/copilot, `copilot --acp`), reading each turn's
// token figures from the session-state journal Copilot CLI keeps for
// every session (docs/behaviour.md#token-accounting).
//
// # Claim
//
// Claims is true when a word of agent.command names Copilot CLI: a word
// whose last path element is copilot (or copilot.cmd, copilot.ps1,
// copilot.exe; the npm loader and the platform package's native binary
// are both named so), the npm package name @github/copilot (bare or with
// @<version>, as npx takes it), or a path that runs through the package's
// own folder (…/@github/copilot/…). Not the platform package's name
// (copilot-linux-x64) nor another @github/copilot-* package. The handshake
// decides the rest: the source is kept only when initialize's
// agentInfo.name is "Copilot" (RuntimeName).
//
// # Arm
//
// Arm creates a private temporary directory (mode 0700) and asks for no
// environment: Copilot CLI writes the journal whatever the environment
// says, and its session/load finds a session there, so the source only
// reads. It reads under Options.StateDir when set, else $HOME/.copilot of
// this process's environment (a local runtime inherits it).
//
// # Journal
//
// Copilot CLI writes <state dir>/session-state/<ACP session
// id>/events.jsonl, JSON lines {"type","data","id","timestamp"}:
//
//   - "user.message" opens a turn (the prompt);
//   - each model call appends "session.usage_record" whose data.usage
//     carries inputTokens, outputTokens, cacheReadTokens,
//     cacheWriteTokens, reasoningTokens and model;
//   - "assistant.message" is one model reply (its toolRequests empty for
//     the final one), and "assistant.turn_end" closes each model round;
//     the turn ends with the turn_end after a final reply.
//
// A turn's figures are the sum of its usage records: inputTokens →
// InputTokens (cache reads included, as OpenAI counts them), outputTokens
// → OutputTokens (reasoning included), cacheReadTokens → CacheReadTokens,
// cacheWriteTokens → CacheWriteTokens, reasoningTokens → ReasoningTokens;
// the record carries no total, so TotalTokens is inputTokens +
// outputTokens (the API's total_tokens); then converted into the one
// meaning (docs/behaviour.md#token-accounting): the cached tokens are taken
// out of InputTokens, the total stays. A record counts only when it
// carries all five counters. The model is the last counted record's.
//
// The prompt result's own usage (summed over the turn) is not read: like
// every vendor figure it is a presence signal only.
//
// # Reading
//
// The file is read incrementally; a trailing line without its newline is
// left for the next read. A new session is read from its first byte; a
// continued one from the file's size when SessionOpened is called, so no
// earlier turn is counted again. TurnUsage polls until the turn's end is
// read, or until the file has stayed unchanged for the settle time after
// a counted record (a turn that ends without a final reply, such as one
// whose tool call was refused), bounded by its context. When the context
// ends first with records read, those are the turn's figures; with
// nothing read it returns the context's error. A turn whose end was read
// with no complete record reports ok false and a nil error.
package copilot_measure
