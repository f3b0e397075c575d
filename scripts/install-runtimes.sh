#!/usr/bin/env bash
# Installs the third-party ACP runtimes and peer clients the interop suite
# (test/interop, `make interop`) drives, at pinned versions, into a cache
# outside the clone, one folder per runtime and version:
#
#   ${ACPDRIVE_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acpdrive/runtimes}/<name>-<version>
#
# and links each runtime the suite looks for into the clone:
#
#   ${ACPDRIVE_RUNTIMES_DIR:-.cache/runtimes}/<name> -> <cache>/<name>-<version>
#
# (.cache is git-ignored). A runtime whose pinned version is already in the
# cache is not installed again, so a fresh clone installs nothing and a
# second run takes about a second; a version change installs the new
# version beside the old one (delete <cache> to reclaim the space).
# Packages come from the npm registry and the Go module proxy, by name,
# through npm and go as configured on the machine.
#
#   scripts/install-runtimes.sh            # everything
#   scripts/install-runtimes.sh gemini     # one or more of: gemini claude-current codex-current claude codex qwen opencode copilot ts-sdk ts-sdk-http acpx go-sdk-agent
#
# claude-current and codex-current are today's releases of the Claude and
# Codex adapters (the packages moved to @agentclientprotocol/…); claude and
# codex keep the last releases under the old names, as compatibility rows.
# ts-sdk-http is the TypeScript SDK's 2.x line, whose Streamable HTTP client
# (createHttpStream) drives `acpdrive serve`; ts-sdk keeps the 1.x example
# agent rows.
#
# The Go SDK example agent is installed here only (<cache>/go-sdk-agent-<version>/agent);
# .ci/run links it into $(go env GOPATH)/bin for the unit test that runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${ACPDRIVE_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acpdrive/runtimes}"
links="${ACPDRIVE_RUNTIMES_DIR:-$PWD/.cache/runtimes}"
mkdir -p "$cache" "$links"
cache="$(cd "$cache" && pwd -P)"

# name  npm package  pinned version
npm_runtimes=(
	"gemini       @google/gemini-cli                 0.61.0"
	"claude-current @agentclientprotocol/claude-agent-acp 0.101.0"
	"codex-current  @agentclientprotocol/codex-acp        2.6.0"
	"claude       @zed-industries/claude-agent-acp   0.23.1"
	"codex        @zed-industries/codex-acp          0.16.0"
	"qwen         @qwen-code/qwen-code               0.24.4"
	"opencode     opencode-ai                        1.18.33"
	"copilot      @github/copilot                    1.0.102"
	"ts-sdk       @agentclientprotocol/sdk           1.9.0"
	"ts-sdk-http  @agentclientprotocol/sdk           2.4.0"
	"acpx         acpx                               0.19.1"
)
go_sdk_agent_module="github.com/coder/acp-go-sdk/example/agent"
go_sdk_agent_version="v0.13.0"

selected=("$@")
wanted() { # name: true when no names were given or name is one of them
	[ "${#selected[@]}" -eq 0 ] && return 0
	local w
	for w in "${selected[@]}"; do [ "$w" = "$1" ] && return 0; done
	return 1
}

installed_version() { # dir package
	local pj="$1/node_modules/$2/package.json"
	[ -f "$pj" ] || return 0
	node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj"
}

link() { # name dir: <links>/<name> -> dir
	local l="$links/$1"
	if [ -L "$l" ] || [ ! -e "$l" ]; then
		ln -sfn "$2" "$l"
	else # a real folder from before the cache: replace it
		rm -rf "$l"
		ln -sfn "$2" "$l"
	fi
}

for row in "${npm_runtimes[@]}"; do
	read -r name pkg version <<<"$row"
	wanted "$name" || continue
	dir="$cache/$name-$version"
	# .complete is written once the install is checked, in a folder named
	# by the version: its presence is the whole check (no node start).
	if [ -f "$dir/.complete" ]; then
		echo "install-runtimes: $pkg@$version already in $dir"
		link "$name" "$dir"
		continue
	fi
	echo "install-runtimes: npm install $pkg@$version into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	printf '{"name":"acpdrive-interop-%s","private":true}\n' "$name" >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error "$pkg@$version" </dev/null)
	got="$(installed_version "$dir" "$pkg")"
	if [ "$got" != "$version" ]; then
		echo "install-runtimes: $pkg installed as version '$got', want $version" >&2
		exit 1
	fi
	if [ "$name" = codex ] && ! compgen -G "$dir/node_modules/$pkg-*/bin/codex-acp" >/dev/null; then
		echo "install-runtimes: $pkg installed without its native binary (optional dependency for $(uname -sm))" >&2
		exit 1
	fi
	# The runtimes whose npm package only wraps a native binary (an
	# optional dependency for this platform) must have brought it.
	native=""
	case "$name" in
	codex-current) native="$dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" ;; # 2.x drives the codex app server
	opencode) native="$dir/node_modules/opencode-linux-x64/bin/opencode" ;;
	copilot) native="$dir/node_modules/@github/copilot-linux-x64/copilot" ;;
	esac
	if [ -n "$native" ] && [ "$(uname -sm)" = "Linux x86_64" ] && [ ! -x "$native" ]; then
		echo "install-runtimes: $pkg installed without its native binary $native" >&2
		exit 1
	fi
	touch "$dir/.complete"
	link "$name" "$dir"
done

if wanted go-sdk-agent; then
	dir="$cache/go-sdk-agent-$go_sdk_agent_version"
	if [ -x "$dir/agent" ] && [ -f "$dir/.complete" ]; then
		echo "install-runtimes: $go_sdk_agent_module@$go_sdk_agent_version already in $dir"
	else
		echo "install-runtimes: go install $go_sdk_agent_module@$go_sdk_agent_version into $dir"
		rm -rf "$dir"
		mkdir -p "$dir"
		GOBIN="$dir" go install "$go_sdk_agent_module@$go_sdk_agent_version"
		touch "$dir/.complete"
	fi
	link go-sdk-agent "$dir"
fi
echo "install-runtimes: done ($cache, linked from $links)"
