# acpdrive — build, test and check targets. Every target works on a fresh
# machine with Go installed; tools come from the Go module proxy at pinned
# versions.

GO            ?= go
MOCKGEN_VER   := v1.6.0
STATICCHECK_VER := v0.8.2
BIN           := bin/acpdrive
PKGS          := ./...

.PHONY: all build run test test-short lint generate check-generate bench bench-density bench-check cover tools clean

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
test:
	$(GO) test -race -count=1 -timeout 20m $(UNIT_PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

tools:
	$(GO) install github.com/golang/mock/mockgen@$(MOCKGEN_VER)
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VER)

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
bench-check:
	cd bench && $(GO) test -count=1 -timeout 10m ./...

cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -1

clean:
	rm -rf bin coverage.out

## interop: the interop suite: installs the real runtimes at pinned versions
## into .cache/runtimes/ (once; later runs reuse them), then drives each one
## through the library and the CLI against fake model servers on 127.0.0.1,
## one test at a time; then the Go SDK client against the reference agent,
## then the self-test of the suite's MCP server (test/mcpserver, its own
## module on the official MCP Go SDK; test/interop builds it itself).
.PHONY: interop
interop:
	scripts/install-runtimes.sh
	$(GO) test -tags interop -race -count=1 -timeout 45m -v ./test/interop/
	cd test/sdkclient && $(GO) test -race -count=1 -timeout 5m ./...
	cd test/mcpserver && $(GO) test -race -count=1 -timeout 5m ./...

## faults: the fault suite: hostile runtimes that try to hang, leak or fool
## acpdrive (test/faults); fuzz-short: every fuzz target briefly. FUZZTIME
## counts executions (5000x) rather than seconds: a time bound makes the Go
## fuzzer fail now and then with "context deadline exceeded" when a worker
## is slow to stop on a loaded machine.
FUZZTIME ?= 5000x
.PHONY: faults fuzz-short
faults:
	$(GO) test -race -count=1 ./test/faults/

fuzz-short:
	@fail=0; for file in $$(grep -rln --include='*_test.go' '^func Fuzz' . | grep -v '^\./bench/\|^\./test/sdkclient/\|^\./test/mcpserver/'); do \
		pkg=./$$(dirname "$${file#./}"); \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo "$(GO) test -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) $$pkg"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$pkg" || fail=1; \
		done; \
	done; exit $$fail

## test-windows: the localexec tests as a Windows binary under Wine: they
## and the reference agent (the child they launch) are cross-compiled with
## GOOS=windows, the ProcessPrng DLL Wine 8.0 lacks is built with mingw
## (scripts/wine/processprng.c), and both run in a throwaway Wine prefix
## that is deleted afterwards. Needs wine (wine64) and
## gcc-mingw-w64-x86-64. What Wine cannot exercise: docs/windows.md.
WINE ?= wine
MINGW_CC ?= x86_64-w64-mingw32-gcc
.PHONY: test-windows
test-windows:
	@set -e; tmp=$$(mktemp -d); trap 'WINEPREFIX="$$tmp/prefix" wineserver -k >/dev/null 2>&1 || true; rm -rf "$$tmp"' EXIT; \
	GOOS=windows GOARCH=amd64 $(GO) vet ./...; \
	GOOS=windows GOARCH=amd64 $(GO) test -c -o "$$tmp/localexec.test.exe" ./adapters/localexec; \
	GOOS=windows GOARCH=amd64 $(GO) build -o "$$tmp/acpdrive.exe" ./cmd/acpdrive; \
	$(MINGW_CC) -shared -O2 -Wl,--kill-at -o "$$tmp/bcryptprimitives.dll" scripts/wine/processprng.c -ladvapi32; \
	export WINEPREFIX="$$tmp/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="; \
	$(WINE) wineboot -i >/dev/null 2>&1; \
	cp "$$tmp/bcryptprimitives.dll" "$$WINEPREFIX/drive_c/windows/system32/"; \
	cd "$$tmp" && ACPDRIVE_TEST_AGENT='Z:'"$$(echo "$$tmp" | tr / '\\')"'\acpdrive.exe' \
		timeout 180 $(WINE) ./localexec.test.exe -test.v -test.count=1 -test.timeout=150s 2>&1 \
		| grep -v -e 'wine32' -e 'multiarch needs' -e 'dpkg --add-architecture' | tee "$$tmp/out.txt"; \
	grep -q '^PASS$$' "$$tmp/out.txt" && ! grep -q -e '^--- FAIL' -e '^FAIL' "$$tmp/out.txt"
