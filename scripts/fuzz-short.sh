#!/usr/bin/env bash
# Runs every fuzz target of the module briefly (make fuzz-short). Each
# package's fuzz test binary is built once (`go test -c -fuzz .`, the
# fuzzing instrumentation on) and its targets run from it one after
# another, in the package's folder (testdata/fuzz is read there) and with
# the fuzz cache `go test -fuzz` uses; FUZZ_JOBS packages (default 2) are
# built and fuzzed at a time. Same targets, same executions as
# `go test -run '^$' -fuzz '^Name$' -fuzztime $FUZZTIME ./pkg` each.
#
#   FUZZTIME=5000x FUZZ_JOBS=2 scripts/fuzz-short.sh
#
# FUZZTIME counts executions (5000x) rather than seconds: a time bound
# makes the Go fuzzer fail now and then with "context deadline exceeded"
# when a worker is slow to stop on a loaded machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZTIME="${FUZZTIME:-5000x}"
jobs="${FUZZ_JOBS:-2}"
GO="${GO:-go}"
export GO

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export tmp
FUZZCACHE="$($GO env GOCACHE)/fuzz"
export FUZZCACHE

# The packages with fuzz targets (the bench, sdkclient and mcpserver
# modules are not this module's).
mapfile -t dirs < <(grep -rln --include='*_test.go' '^func Fuzz' . |
	grep -v '^\./bench/\|^\./test/sdkclient/\|^\./test/mcpserver/' |
	xargs -n1 dirname | sort -u)

fuzz_package() { # dir: build its fuzz test binary, run its targets; log to $tmp
	local dir="$1" key bin log names name
	key="$(echo "${dir#./}" | tr / _)"
	bin="$tmp/$key.test"
	log="$tmp/$key.log"
	names="$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$dir"/*_test.go)"
	{
		local pkg t0=$SECONDS
		pkg="$($GO list "$dir")"
		echo "== fuzz $pkg: $(echo $names | wc -w) targets ($(echo $names))"
		if ! $GO test -c -fuzz . -o "$bin" "$dir"; then
			echo "FAIL $pkg: the fuzz test binary did not build"
			touch "$tmp/$key.failed"
			return 0
		fi
		for name in $names; do
			echo "$GO test -run '^\$' -fuzz '^$name\$' -fuzztime $FUZZTIME $dir"
			if ! (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^$name\$" -test.fuzztime="$FUZZTIME" \
				-test.fuzzcachedir="$FUZZCACHE/$pkg" -test.paniconexit0 -test.timeout=10m); then
				echo "--- FAIL: $name ($pkg)"
				touch "$tmp/$key.failed"
			fi
			echo "$name" >>"$tmp/$key.ran"
		done
		echo "== fuzz $pkg: $((SECONDS - t0)) s"
	} >"$log" 2>&1
}
export -f fuzz_package

printf '%s\n' "${dirs[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_package "$1"' _ {}

ran=0
for dir in "${dirs[@]}"; do
	key="$(echo "${dir#./}" | tr / _)"
	cat "$tmp/$key.log"
	[ -f "$tmp/$key.ran" ] && ran=$((ran + $(wc -l <"$tmp/$key.ran")))
done
failed=$(find "$tmp" -name '*.failed' | wc -l)
echo "== fuzz: $ran fuzz targets ran in ${#dirs[@]} packages, $failed packages failed"
[ "$failed" -eq 0 ] && [ "$ran" -gt 0 ]
