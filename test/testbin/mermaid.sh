#!/usr/bin/env bash
# Installs what the tests need to parse Mermaid diagrams with Mermaid's
# own parser (test/mermaid): Node (nodejs, with apt-get, when missing and
# root) and the mermaid and jsdom packages from the npm registry into
# TESTBIN/mermaid, once: a no-op when those versions are there.
set -euo pipefail
dir=$1/mermaid
MERMAID=11.17.2
JSDOM=24.1.3
say() { printf '[testbin] %s\n' "$*" >&2; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		say "Mermaid checks need node and npm; cannot install them here (those tests will skip)"
		exit 0
	fi
	say "installing nodejs and npm with apt-get for the Mermaid checks"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends nodejs npm >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends nodejs npm >/dev/null; }
fi
have() { [ -f "$dir/node_modules/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$dir/node_modules/$1/package.json"; }
if have mermaid "$MERMAID" && have jsdom "$JSDOM"; then
	exit 0
fi
say "installing mermaid $MERMAID and jsdom $JSDOM into $dir"
mkdir -p "$dir"
# A package of its own, so npm installs here rather than in a parent.
printf '{"name": "mcs-gitops-mermaid-check", "private": true}\n' >"$dir/package.json"
(cd "$dir" && npm install --silent --no-audit --no-fund --save-exact "mermaid@$MERMAID" "jsdom@$JSDOM" >/dev/null)
