#!/usr/bin/env bash
# Runs the upstream MCS conformance suite (kubernetes-sigs/mcs-api,
# conformance/) against `mcs-gitops run` on the data-plane lab: three
# members with real pods, kube-proxy and CoreDNS, so the Connectivity and
# DNS specs run too. The suite is a module the Go module proxy does not
# serve: pass a checkout of that repository.
#
# Usage: test/conformance/run.sh MCS_API_CHECKOUT [GINKGO_LABEL_FILTER]
# Needs what the lab needs (root, `make testbin`) plus the programs the
# suite's pods run: sh, socat, nc (netcat-openbsd) and nslookup
# (bind9-dnsutils). Leaves its logs in a temporary directory it names.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 MCS_API_CHECKOUT [GINKGO_LABEL_FILTER]" >&2; exit 2; }
checkout=$(cd "$1" && pwd)
filter=${2:-}
cd "$(dirname "$0")/../.."
for p in sh socat nc nslookup; do
	command -v "$p" >/dev/null || { echo "$p not found: apt-get install socat netcat-openbsd bind9-dnsutils" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/mcs-conformance.XXXXXX")
mkdir -p "$work/kube" "$work/in" "$work/repo"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done; echo "logs in $work"; }
trap cleanup EXIT

echo "==> building mcs-gitops, the members program and the suite"
go build -o "$work/mcs-gitops" ./cmd/mcs-gitops
go build -o "$work/members" ./test/demo/members
(cd "$checkout/conformance" && GOFLAGS=-mod=mod go test -c -o "$work/conformance.test" .)

# The suite makes its own namespaces and workloads; the members start empty.
for i in 1 2 3; do printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: placeholder\n' >"$work/in/cluster-$i.yaml"; done
cat >"$work/clusterset.yaml" <<YAML
apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata:
  name: conformance
spec:
  members:
  - name: cluster-1
    kubeconfig: {path: $work/kube/cluster-1.kubeconfig}
  - name: cluster-2
    kubeconfig: {path: $work/kube/cluster-2.kubeconfig}
  - name: cluster-3
    kubeconfig: {path: $work/kube/cluster-3.kubeconfig}
  render:
    serviceImportAPIVersion: v1beta1
  sync:
    debounce: 100ms
    minCommitInterval: "0"
YAML
git -C "$work/repo" init -q -b main

echo "==> starting the lab"
"$work/members" --dir "$work/kube" --lab-inputs "$work/in" >"$work/members.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do [ -f "$work/kube/ready" ] && break; sleep 0.2; done
[ "$(cat "$work/kube/ready" 2>/dev/null)" = lab ] || { echo "the lab did not start (or cannot run here): see $work/members.log" >&2; exit 1; }

echo "==> mcs-gitops run"
"$work/mcs-gitops" run --config "$work/clusterset.yaml" --repo "$work/repo" --leader-elect=false --metrics-addr 127.0.0.1:0 >"$work/run.log" 2>&1 &
pids=("$!" "${pids[@]}")

echo "==> the suite (label filter: ${filter:-none})"
rc=0
# The suite writes report.html and report.yaml into its working directory.
cd "$work"
KUBECONFIG="$work/kube/cluster-1.kubeconfig:$work/kube/cluster-2.kubeconfig:$work/kube/cluster-3.kubeconfig" \
	"$work/conformance.test" --contexts=cluster-1,cluster-2 -ginkgo.label-filter="$filter" -ginkgo.v -ginkgo.timeout=30m \
	>"$work/suite.log" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$work/suite.log" | grep -E '^(Ran |PASS|FAIL)|\[FAILED\]|^ \[It\]' | tail -40
exit "$rc"
