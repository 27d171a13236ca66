#!/usr/bin/env bash
# Builds the binaries envtest needs (kube-apiserver, etcd) and CoreDNS from the
# Go module proxy into a cache directory outside the repository, once per
# machine. envtest's usual download cannot work offline; these builds can.
#
# Usage: test/testbin/build.sh [DIR]   (default: ${MCS_GITOPS_TESTBIN:-$HOME/.cache/mcs-gitops/testbin})
# Builds only what is missing; each binary is built in a throwaway module.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.5}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
WHAT=${WHAT:-"kube-apiserver etcd"}

dir=${1:-${MCS_GITOPS_TESTBIN:-$HOME/.cache/mcs-gitops/testbin}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

say() { printf '[testbin] %s\n' "$*" >&2; }

build_apiserver() {
  local out="$dir/kube-apiserver"
  [ -x "$out" ] && return 0
  say "building kube-apiserver v$K8S_VERSION from the module proxy (first time only, ~7 min on 2 cores)"
  local m="$work/apiserver"
  mkdir -p "$m"
  # k8s.io/kubernetes points its staging modules at ./staging; a consumer must
  # pin each of them to the matching published v0.x release instead.
  local modfile
  modfile=$(cd "$m" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  [ -f "$modfile" ] || { say "cannot read go.mod of k8s.io/kubernetes@v$K8S_VERSION"; exit 1; }
  local staging
  staging=$(grep -E '=> \./staging/' "$modfile" | awk '{print $1}' | sort -u)
  say "pinning $(echo "$staging" | wc -l) staging modules to v0.${K8S_VERSION#1.}"
  {
    echo "module testbin/apiserver"
    echo "go 1.26"
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    for s in $staging; do echo "replace $s => $s v0.${K8S_VERSION#1.}"; done
  } >"$m/go.mod"
  echo 'package main' >"$m/tools.go"
  (cd "$m" && go mod tidy >/dev/null 2>&1 || true
   go get "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION" >&2
   go build -trimpath -o "$out.tmp" \
     -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#1.}" \
     k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out.tmp" "$out"
  say "kube-apiserver ready: $out"
}

build_etcd() {
  local out="$dir/etcd"
  [ -x "$out" ] && return 0
  say "building etcd $ETCD_VERSION from the module proxy (first time only, ~1 min)"
  local m="$work/etcd"
  mkdir -p "$m"
  printf 'module testbin/etcd\ngo 1.26\n' >"$m/go.mod"
  (cd "$m" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2 &&
   go build -trimpath -ldflags "-s -w" -o "$out.tmp" go.etcd.io/etcd/server/v3)
  mv "$out.tmp" "$out"
  say "etcd ready: $out"
}

build_coredns() {
  local out="$dir/coredns"
  [ -x "$out" ] && return 0
  say "building coredns $COREDNS_VERSION from the module proxy (first time only, ~5 min)"
  local m="$work/coredns"
  mkdir -p "$m"
  printf 'module testbin/coredns\ngo 1.26\n' >"$m/go.mod"
  cat >"$m/main.go" <<'GO'
package main

import (
	_ "github.com/coredns/coredns/core/plugin"
	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
GO
  (cd "$m" && go get "github.com/coredns/coredns@$COREDNS_VERSION" >&2 && go mod tidy >&2 &&
   go build -trimpath -ldflags "-s -w" -o "$out.tmp" .)
  mv "$out.tmp" "$out"
  say "coredns ready: $out"
}

for w in $WHAT; do
  case $w in
    kube-apiserver) build_apiserver ;;
    etcd) build_etcd ;;
    coredns) build_coredns ;;
    *) say "unknown binary $w"; exit 2 ;;
  esac
done
echo "$dir"
