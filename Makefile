# acpdrive — build, test and check targets. Every target works on a fresh
# machine with Go installed; tools come from the Go module proxy at pinned
# versions.

GO            ?= go
MOCKGEN_VER   := v1.6.0
STATICCHECK_VER := v0.8.2
BIN           := bin/acpdrive
PKGS          := ./...

.PHONY: all build run test test-short lint generate check-generate bench bench-density bench-check cover tools clean

## TESTTIMES reads `go test -json` and writes what go test would, then how
## many tests ran and the slowest ones (scripts/testtimes.go); built once
## into bin/.
TESTTIMES := $(CURDIR)/bin/testtimes
$(TESTTIMES): scripts/testtimes.go
	$(GO) build -o $@ scripts/testtimes.go

all: build test

build:
	$(GO) build -o $(BIN) ./cmd/acpdrive

## run: acpdrive's main job on the built-in reference agent (PROMPT overrides)
PROMPT ?= hello from acpdrive
run:
	$(GO) run ./cmd/acpdrive run "$(PROMPT)"

## test: every unit and contract test, with the race detector (the fault
## suite, test/faults, runs with make faults; the interop suite with make
## interop)
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/test/faults$$')
test: SHELL := /bin/bash
test: $(TESTTIMES)
	set -o pipefail; $(GO) test -race -count=1 -timeout 20m -json $(UNIT_PKGS) | $(TESTTIMES) -label test -slowest 10

test-short:
	$(GO) test -short -count=1 $(PKGS)

## tools: mockgen and staticcheck at their pinned versions, each installed
## only when the one in GOPATH/bin is missing or another version (generate
## and lint depend on it; .ci/run makes both).
GOBIN_DIR = $$($(GO) env GOPATH)/bin
tools:
	@$(GO) version -m $(GOBIN_DIR)/mockgen 2>/dev/null | grep -q 'mod[[:space:]]*github.com/golang/mock[[:space:]]*$(MOCKGEN_VER)[[:space:]]' \
		|| { echo "$(GO) install github.com/golang/mock/mockgen@$(MOCKGEN_VER)"; $(GO) install github.com/golang/mock/mockgen@$(MOCKGEN_VER); }
	@$(GO) version -m $(GOBIN_DIR)/staticcheck 2>/dev/null | grep -q 'mod[[:space:]]*honnef.co/go/tools[[:space:]]*$(STATICCHECK_VER)[[:space:]]' \
		|| { echo "$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VER)"; $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VER); }

lint: tools
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	GOOS=windows $(GO) vet $(PKGS)
	$$($(GO) env GOPATH)/bin/staticcheck $(PKGS)

generate: tools
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" $(GO) generate ./ports/...

## check-generate: fails when the committed mocks are stale
check-generate: generate
	@git diff --exit-code -- ports/mocks || (echo "ports/mocks is stale: run make generate and commit"; exit 1)

## bench: the whole comparison in one command (BENCHMARKS.md): the package
## micro-benchmarks, the SSH start latency, then the bench module (the
## stream through the library, the CLI, the Go SDK and the floor; start
## latency; line sizes; sessions at scale), each BENCHCOUNT times; the
## output goes to bench/results.txt and its medians to docs/bench.svg;
## then bench-density.
## BENCHFLAGS passes more flags to the bench module (e.g. -stream-turns 10).
BENCHCOUNT ?= 3
BENCHFLAGS ?=
bench: SHELL := /bin/bash
bench:
	set -o pipefail; { \
		$(GO) test -run '^$$' -bench . -benchmem -count=1 ./protocol/... ./app/... && \
		$(GO) test -run '^$$' -bench StartLatency -benchtime 5x ./adapters/sshexec/native/ && \
		cd bench && $(GO) test -run '^$$' -bench . -benchmem -count=$(BENCHCOUNT) -timeout 90m . $(BENCHFLAGS); \
	} 2>&1 | tee bench/results.txt
	cd bench && $(GO) run ./cmd/benchplot -in results.txt -out ../docs/bench.svg
	$(MAKE) bench-density

## bench-density: what a session costs on the real runtimes (Claude
## adapter 0.101.0, codex-acp 2.6.0, Gemini CLI 0.61.0) against the fake
## models, sessions sharing one runtime process vs a process per session,
## at 1, 10 and 50 sessions (BENCHMARKS.md, "Runtime host density"). It
## installs the three runtimes first (scripts/install-runtimes.sh; a
## second run installs nothing); outside CI, runtimes that cannot be
## installed skip it with a message. The output goes to bench/density.txt.
## DENSITYBENCH narrows it (e.g. HostDensity/codex-current/sessions=10).
DENSITYBENCH ?= HostDensity
bench-density: SHELL := /bin/bash
bench-density:
	@if ! scripts/install-runtimes.sh claude-current codex-current gemini; then \
		if [ -n "$$CI" ]; then echo "bench-density: the runtimes could not be installed" >&2; exit 1; fi; \
		echo "bench-density: skipped: the runtimes could not be installed (scripts/install-runtimes.sh claude-current codex-current gemini)"; \
		exit 0; \
	fi; \
	set -o pipefail; \
	$(GO) test -tags interop -run '^$$' -bench '$(DENSITYBENCH)' -benchtime 1x -timeout 180m ./test/interop/ 2>&1 | tee bench/density.txt

## bench-check: the bench module's tests (a 1,000,000-notification burst
## with zero loss, the SDK overflow sweep, every stream client handling
## the whole stream, the plot tool); no timing is asserted
bench-check: SHELL := /bin/bash
bench-check: $(TESTTIMES)
	set -o pipefail; cd bench && $(GO) test -count=1 -timeout 10m -json ./... | $(TESTTIMES) -label bench-check -slowest 5

cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -1

clean:
	rm -rf bin coverage.out

## interop: the interop suite: installs the real runtimes at pinned versions
## into a cache outside the clone (once per version; a fresh clone only
## links them into .cache/runtimes/), then drives each one through the
## library and the CLI against fake model servers on 127.0.0.1; then the Go
## SDK client against the reference agent, then the self-test of the
## suite's MCP server (test/mcpserver, its own module on the official MCP Go
## SDK; test/interop builds it itself). The suite's isolated tests run
## INTEROP_PARALLEL at a time (t.Parallel; the ones that must run alone say
## why, docs/runtimes.md "Order"): 4 suits 2 cores, whose runtimes spend
## most of a test waiting. The run ends with how many tests ran and the 20
## slowest (scripts/testtimes.go).
INTEROP_PARALLEL ?= 4
.PHONY: interop
interop: SHELL := /bin/bash
interop: $(TESTTIMES)
	scripts/install-runtimes.sh
	set -o pipefail; $(GO) test -tags interop -race -count=1 -timeout 45m -parallel $(INTEROP_PARALLEL) -json ./test/interop/ | $(TESTTIMES) -v -label interop -slowest 20
	set -o pipefail; cd test/sdkclient && $(GO) test -race -count=1 -timeout 5m -json ./... | $(TESTTIMES) -label sdkclient -slowest 0
	set -o pipefail; cd test/mcpserver && $(GO) test -race -count=1 -timeout 5m -json ./... | $(TESTTIMES) -label mcpserver -slowest 0

## faults: the fault suite: hostile runtimes that try to hang, leak or fool
## acpdrive (test/faults); fuzz-short: every fuzz target briefly. FUZZTIME
## counts executions (5000x) rather than seconds: a time bound makes the Go
## fuzzer fail now and then with "context deadline exceeded" when a worker
## is slow to stop on a loaded machine.
FUZZTIME ?= 5000x
.PHONY: faults fuzz-short
faults: SHELL := /bin/bash
faults: $(TESTTIMES)
	set -o pipefail; $(GO) test -race -count=1 -json ./test/faults/ | $(TESTTIMES) -label faults -slowest 5

## fuzz-short builds each package's fuzz test binary once and runs its
## targets from it, FUZZ_JOBS packages at a time (scripts/fuzz-short.sh).
FUZZ_JOBS ?= 2
fuzz-short:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz-short.sh

## test-windows: the localexec tests as a Windows binary under Wine: they
## and the reference agent (the child they launch) are cross-compiled with
## GOOS=windows, the ProcessPrng DLL Wine 8.0 lacks is built with mingw
## (scripts/wine/processprng.c), and both run in a throwaway Wine prefix
## that is deleted afterwards. Needs wine (wine64) and
## gcc-mingw-w64-x86-64. What Wine cannot exercise: docs/windows.md.
## (GOOS=windows go vet runs in make lint, not here.)
WINE ?= wine
MINGW_CC ?= x86_64-w64-mingw32-gcc
.PHONY: test-windows
test-windows:
	@set -e; tmp=$$(mktemp -d); trap 'WINEPREFIX="$$tmp/prefix" wineserver -k >/dev/null 2>&1 || true; rm -rf "$$tmp"' EXIT; \
	GOOS=windows GOARCH=amd64 $(GO) test -c -o "$$tmp/localexec.test.exe" ./adapters/localexec; \
	GOOS=windows GOARCH=amd64 $(GO) build -o "$$tmp/acpdrive.exe" ./cmd/acpdrive; \
	$(MINGW_CC) -shared -O2 -Wl,--kill-at -o "$$tmp/bcryptprimitives.dll" scripts/wine/processprng.c -ladvapi32; \
	export WINEPREFIX="$$tmp/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="; \
	$(WINE) wineboot -i >/dev/null 2>&1; \
	cp "$$tmp/bcryptprimitives.dll" "$$WINEPREFIX/drive_c/windows/system32/"; \
	cd "$$tmp" && ACPDRIVE_TEST_AGENT='Z:'"$$(echo "$$tmp" | tr / '\\')"'\acpdrive.exe' \
		timeout 180 $(WINE) ./localexec.test.exe -test.v -test.count=1 -test.timeout=150s 2>&1 \
		| grep -v -e 'wine32' -e 'multiarch needs' -e 'dpkg --add-architecture' | tee "$$tmp/out.txt"; \
	echo "== test-windows: $$(grep -c '^--- PASS: Test' "$$tmp/out.txt") top-level tests passed, $$(grep -c '^--- FAIL: Test' "$$tmp/out.txt") failed"; \
	grep -q '^PASS$$' "$$tmp/out.txt" && ! grep -q -e '^--- FAIL' -e '^FAIL' "$$tmp/out.txt"
