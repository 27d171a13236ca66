#!/usr/bin/env bash
# Builds the binaries envtest needs (kube-apiserver, etcd), CoreDNS, and the
# data-plane lab's kube-controller-manager and kube-proxy from the Go module
# proxy into a cache directory outside the repository, once per machine.
# envtest's usual download cannot work offline; these builds can.
#
# Usage: test/testbin/build.sh [DIR]   (default: ${MCS_GITOPS_TESTBIN:-$HOME/.cache/mcs-gitops/testbin})
# Builds only what is missing or reports a different version; each binary is
# built in a throwaway module (the three Kubernetes ones in one), two
# builds at a time. WHAT="kube-apiserver etcd" skips the others (the
# test/dns and lab tests then skip outside CI).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
# The oldest Kubernetes mcs-gitops supports (docs/compatibility.md): the
# first with ServiceCIDR GA, without which a member's IP families are
# unknown. make test runs the e2e core against it too, as
# kube-apiserver-<minor> beside the current one (MCS_KUBE_APISERVER picks it).
K8S_OLDEST_VERSION=${K8S_OLDEST_VERSION:-1.33.13}
ETCD_VERSION=${ETCD_VERSION:-v3.6.5}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
# The newest Traefik that builds from the module proxy: v3.7 replaces a module
# of its own with a directory its module zip does not hold.
TRAEFIK_VERSION=${TRAEFIK_VERSION:-v3.6.12}
# The forge review mode's tests open pull requests on. Its module is published
# as code.gitea.io/gitea but declares gitea.dev, so it is built from the
# downloaded module source rather than required.
GITEA_VERSION=${GITEA_VERSION:-v1.27.3}
oldest_apiserver="kube-apiserver-${K8S_OLDEST_VERSION%.*}"
WHAT=${WHAT:-"kube-apiserver $oldest_apiserver etcd coredns kube-controller-manager kube-proxy traefik gitea"}

dir=${1:-${MCS_GITOPS_TESTBIN:-$HOME/.cache/mcs-gitops/testbin}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
# The binaries are stripped (-s -w), so the compiler need not write the
# DWARF the linker drops: about 5-10% less compile time.
nodwarf=-gcflags=all=-dwarf=false

say() { printf '[testbin] %s\n' "$*" >&2; }

# cached BIN WANT: BIN exists and its --version output mentions WANT, so a
# version bump rebuilds instead of silently testing against the old binary.
cached() {
  local v
  [ -x "$1" ] && v=$("$1" --version 2>&1) && [[ $v == *"$2"* ]]
}

# with_heartbeat LABEL CMD...: go build prints nothing for minutes, and CI
# runners (and people) give up on a job that looks hung.
with_heartbeat() {
  local label=$1 start elapsed pid rc=0
  shift
  local next
  start=$(date +%s)
  next=$((start + 30))
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    # Compare against the next due time, not elapsed%30: on a loaded machine
    # `sleep 1` overshoots and an exact multiple of 30 would be skipped.
    if [ "$(date +%s)" -ge "$next" ] && kill -0 "$pid" 2>/dev/null; then
      elapsed=$(($(date +%s) - start))
      say "still $label (${elapsed}s)"
      next=$((next + 30))
    fi
  done
  wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || say "$label failed (exit $rc)"
  return "$rc"
}

# k8s_module: the throwaway module the Kubernetes binaries are built in, made
# once per run. k8s.io/kubernetes points its staging modules at ./staging; a
# consumer must pin each of them to the matching published v0.x release.
k8s_module() {
  local version=$1 m="$work/kubernetes-$1"
  [ -f "$m/go.mod" ] && { echo "$m"; return 0; }
  mkdir -p "$m"
  local modfile
  modfile=$(cd "$m" && go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  [ -f "$modfile" ] || { say "cannot read go.mod of k8s.io/kubernetes@v$version"; exit 1; }
  local staging
  staging=$(grep -E '=> \./staging/' "$modfile" | awk '{print $1}' | sort -u)
  [ -n "$staging" ] || { say "no staging replacements found in $modfile"; exit 1; }
  say "pinning $(echo "$staging" | wc -l) staging modules to v0.${version#1.}"
  {
    echo "module testbin/kubernetes"
    echo "go 1.26"
    echo "require k8s.io/kubernetes v$version"
    for s in $staging; do echo "replace $s => $s v0.${version#1.}"; done
  } >"$m/go.mod"
  echo "$m"
}

# build_k8s NAME [VERSION [OUT]]: one of k8s.io/kubernetes/cmd/NAME. The three
# share most of their packages, so the second and third compile in a fraction
# of the first.
build_k8s() {
  local name=$1 version=${2:-$K8S_VERSION} out="$dir/${3:-$1}"
  local minor=${version#*.}
  minor=${minor%%.*}
  cached "$out" "v$version" && { say "$(basename "$out") v$version cached"; return 0; }
  say "building $name v$version from the module proxy (first time only; kube-apiserver ~7 min on 2 cores, the others ~2 min each after it)"
  local m
  m=$(k8s_module "$version")
  (cd "$m" && with_heartbeat "resolving $name dependencies" \
    go get "k8s.io/kubernetes/cmd/$name@v$version")
  # gitMajor/gitMinor feed the /version answer, which clients use to pick
  # behaviour; they must be the bare numbers ("1", "36").
  (cd "$m" && with_heartbeat "compiling $name" \
    go build -trimpath "$nodwarf" -o "$out.tmp" \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
    "k8s.io/kubernetes/cmd/$name")
  mv "$out.tmp" "$out"
  say "$name ready: $out"
}

build_etcd() {
  local out="$dir/etcd"
  cached "$out" "${ETCD_VERSION#v}" && { say "etcd $ETCD_VERSION cached"; return 0; }
  say "building etcd $ETCD_VERSION from the module proxy (first time only, ~1 min)"
  local m="$work/etcd"
  mkdir -p "$m"
  printf 'module testbin/etcd\ngo 1.26\n' >"$m/go.mod"
  (cd "$m" && with_heartbeat "resolving etcd dependencies" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
  (cd "$m" && with_heartbeat "compiling etcd" go build -trimpath "$nodwarf" -ldflags "-s -w" -o "$out.tmp" go.etcd.io/etcd/server/v3)
  mv "$out.tmp" "$out"
  say "etcd ready: $out"
}

build_coredns() {
  local out="$dir/coredns"
  cached "$out" "${COREDNS_VERSION#v}" && { say "coredns $COREDNS_VERSION cached"; return 0; }
  say "building coredns $COREDNS_VERSION from the module proxy (first time only, ~5 min on 2 cores)"
  local m="$work/coredns"
  mkdir -p "$m"
  printf 'module testbin/coredns\ngo 1.26\n' >"$m/go.mod"
  # The stock plugin set (core/plugin, ordered by plugin.cfg upstream); test/dns
  # needs kubernetes (with `multicluster`), ready, log and errors from it.
  cat >"$m/main.go" <<'GO'
package main

import (
	_ "github.com/coredns/coredns/core/plugin"
	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
GO
  # go get resolves exactly the packages main.go imports; no `go mod tidy`,
  # which would also fetch every dependency of CoreDNS's own tests.
  (cd "$m" && with_heartbeat "resolving coredns dependencies" go get "github.com/coredns/coredns@$COREDNS_VERSION")
  (cd "$m" && with_heartbeat "compiling coredns" go build -trimpath "$nodwarf" -ldflags "-s -w" -o "$out.tmp" .)
  # `coredns -version` prints CoreDNS-<version>; cached() checks it next time.
  cached "$out.tmp" "${COREDNS_VERSION#v}" || { say "built coredns does not report version ${COREDNS_VERSION#v}"; exit 1; }
  mv "$out.tmp" "$out"
  say "coredns ready: $out"
}

# build_traefik: the lab's Gateway API implementation. Traefik's go.mod
# replaces modules with its own forks and excludes a broken release; a
# consumer module must repeat both, which are copied from it here.
build_traefik() {
  local out="$dir/traefik"
  traefik_is() { [ -x "$1" ] && [[ $("$1" version 2>&1) == *"Version:"*"${TRAEFIK_VERSION#v}"* ]]; }
  traefik_is "$out" && { say "traefik $TRAEFIK_VERSION cached"; return 0; }
  say "building traefik $TRAEFIK_VERSION from the module proxy (first time only, ~8 min on 2 cores)"
  local m="$work/traefik" modfile
  mkdir -p "$m"
  modfile=$(cd "$m" && go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  [ -f "$modfile" ] || { say "cannot read go.mod of traefik $TRAEFIK_VERSION"; exit 1; }
  if grep -Eq '=> \./' "$modfile"; then
    say "traefik $TRAEFIK_VERSION replaces a module with a local directory; it cannot build from the module proxy"
    exit 1
  fi
  {
    echo "module testbin/traefik"
    echo "go 1.26"
    echo "require github.com/traefik/traefik/v3 $TRAEFIK_VERSION"
    sed -n '/^replace (/,/^)/p; /^replace [^(]/p; /^exclude /p' "$modfile"
  } >"$m/go.mod"
  (cd "$m" && with_heartbeat "resolving traefik dependencies" go get "github.com/traefik/traefik/v3/cmd/traefik@$TRAEFIK_VERSION")
  (cd "$m" && with_heartbeat "compiling traefik" go build -trimpath "$nodwarf" -o "$out.tmp" \
    -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=${TRAEFIK_VERSION#v}" \
    github.com/traefik/traefik/v3/cmd/traefik)
  traefik_is "$out.tmp" || { say "built traefik does not report version ${TRAEFIK_VERSION#v}"; exit 1; }
  mv "$out.tmp" "$out"
  say "traefik ready: $out"
}

# build_gitea: Gitea requires three modules the proxy does not serve at those
# versions: gitea.dev/actions-proto-go and gitea.dev/sdk are served under
# their code.gitea.io names (whose go.mod declares the gitea.dev path, so a
# replace works), and gitlab client-go v2.42.0 is not served at all (v2.43.0,
# used only by the GitLab migration code Gitea never runs here). Gitea reads
# its templates and options (locales, licences) from disk without the
# bindata tag: they are copied beside the binary, and the tests point
# STATIC_ROOT_PATH there.
build_gitea() {
  local out="$dir/gitea/gitea"
  gitea_is() { [ -x "$1" ] && [[ $("$1" --version 2>&1) == *"version ${GITEA_VERSION#v} "* ]] && [ -d "$dir/gitea/options" ]; }
  gitea_is "$out" && { say "gitea $GITEA_VERSION cached"; return 0; }
  say "building gitea $GITEA_VERSION from the module proxy (first time only, ~7 min on 2 cores)"
  local src m="$work/gitea"
  mkdir -p "$m"
  src=$(cd "$m" && go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  [ -d "$src" ] || { say "cannot download code.gitea.io/gitea@$GITEA_VERSION"; exit 1; }
  cp -r "$src/." "$m/src"
  chmod -R u+w "$m/src"
  (cd "$m/src" && go mod edit \
    -replace gitea.dev/actions-proto-go=code.gitea.io/actions-proto-go@v0.6.0 \
    -replace gitea.dev/sdk=code.gitea.io/sdk@v1.2.0 \
    -replace gitlab.com/gitlab-org/api/client-go/v2=gitlab.com/gitlab-org/api/client-go/v2@v2.43.0)
  (cd "$m/src" && with_heartbeat "compiling gitea" go build -trimpath "$nodwarf" -o "$out.tmp" \
    -ldflags "-s -w -X main.Version=${GITEA_VERSION#v}" .)
  rm -rf "$dir/gitea/options" "$dir/gitea/templates"
  mkdir -p "$dir/gitea"
  cp -r "$m/src/options" "$m/src/templates" "$dir/gitea/"
  mv "$out.tmp" "$out"
  gitea_is "$out" || { say "built gitea does not report version ${GITEA_VERSION#v}"; exit 1; }
  say "gitea ready: $out"
}

build_one() {
  case $1 in
    kube-apiserver | kube-controller-manager | kube-proxy) build_k8s "$1" ;;
    "$oldest_apiserver") build_k8s kube-apiserver "$K8S_OLDEST_VERSION" "$1" ;;
    etcd) build_etcd ;;
    coredns) build_coredns ;;
    traefik) build_traefik ;;
    gitea) build_gitea ;;
  esac
}

# lane BIN...: builds one after another, in a subshell of its own.
lane() (
  for w in "$@"; do
    build_one "$w"
  done
)

# Two lanes at once. One go build leaves a core idle for much of its time
# (resolving modules, waiting on a package's dependencies, the
# single-threaded link), so a second fills it: cold on 2 cores, the eight
# builds take about a fifth less than in a row. The current Kubernetes
# binaries share one lane, and so one throwaway module and their packages.
lane_a=() lane_b=()
for w in $WHAT; do
  case $w in
    kube-apiserver | kube-controller-manager | kube-proxy | traefik) lane_a+=("$w") ;;
    "$oldest_apiserver" | etcd | coredns | gitea) lane_b+=("$w") ;;
    *) say "unknown binary $w (WHAT: any of kube-apiserver $oldest_apiserver etcd coredns kube-controller-manager kube-proxy traefik gitea)"; exit 2 ;;
  esac
done
lane "${lane_a[@]}" &
pid_a=$!
lane "${lane_b[@]}" &
pid_b=$!
rc=0
wait "$pid_a" || rc=1
wait "$pid_b" || rc=1
[ "$rc" -eq 0 ] || { say "a build failed (above)"; exit 1; }
echo "$dir"
