#!/usr/bin/env bash
# Installs the host tools the data-plane lab (test/lab) needs and Go cannot
# build: nft (nftables, which kube-proxy runs), ip (iproute2) and sysctl
# (procps), with the system package manager, and says what it did. Without
# root nothing is installed: the lab's tests then skip (and fail under
# CI=true) with the reason.
set -euo pipefail

say() { printf '[testbin] %s\n' "$*" >&2; }

missing=()
command -v nft >/dev/null || missing+=(nftables)
command -v ip >/dev/null || missing+=(iproute2)
command -v sysctl >/dev/null || missing+=(procps)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  say "the data-plane lab needs ${missing[*]} and root; not root, so not installing them (lab tests will skip)"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  say "the data-plane lab needs ${missing[*]}; no apt-get here, install them with your package manager (lab tests will skip)"
  exit 0
fi
say "installing ${missing[*]} with apt-get for the data-plane lab"
export DEBIAN_FRONTEND=noninteractive
# The package lists may be missing or stale on a fresh machine.
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
say "installed ${missing[*]}"
