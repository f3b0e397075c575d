//go:build interop

// Package interop is acpdrive's acceptance suite against real runtimes:
// Gemini CLI, the Claude agent ACP adapter, codex-acp, Qwen Code,
// opencode, GitHub Copilot CLI, the Go and TypeScript SDK example agents,
// each installed at a pinned version by scripts/install-runtimes.sh and
// driven through the library and the CLI against the fake model servers
// of test/fakes on 127.0.0.1 (Qwen Code, opencode and Copilot CLI inside
// a network namespace that proves they reach nothing else). It also
// drives acpdrive's reference agent with a client we did not write (acpx).
//
// Run it with `make interop` (build tag interop). A runtime that is not
// installed fails the suite in CI (CI set) and skips elsewhere with the
// install command.
//
// Every test is isolated (its own root, HOME, TMPDIR and workspace, the
// runtime under `env -i`, fake servers and network namespaces of its own,
// random ports), so every test calls t.Parallel() and the suite runs
// -parallel at a time (make interop: INTEROP_PARALLEL, 4 on 2 cores; the
// runtimes spend most of a test waiting). A test that must run alone says
// why where it starts (the SSH tests: t.Setenv changes this process's
// environment); Go runs those first, before any parallel test.
package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }
