#!/usr/bin/env bash
# Runs the upstream MCS conformance suite (kubernetes-sigs/mcs-api,
# conformance/) against `mcs-gitops run` on the data-plane lab: three
# members with real pods, kube-proxy and CoreDNS, so the Connectivity and
# DNS specs run too. The suite is a module the Go module proxy does not
# serve: pass a checkout of that repository.
#
# Usage: [MCS_LAB_STACKS=S1,S2,S3] test/conformance/run.sh MCS_API_CHECKOUT [GINKGO_LABEL_FILTER]
#
# MCS_LAB_STACKS gives the members' IP families in order (dual-stack, IPv4
# or IPv6; default dual-stack everywhere; a shorter list repeats its last
# entry), e.g. MCS_LAB_STACKS=IPv4 or MCS_LAB_STACKS=dual-stack,IPv6,IPv4.
# The suite runs with all three members as its contexts.
#
# Needs what the lab needs (root, `make testbin`) plus the programs the
# suite's pods run: sh, socat, nc (netcat-openbsd) and nslookup
# (bind9-dnsutils). Leaves its logs, the suite's reports and a Markdown
# table of every spec (table.md) in a temporary directory it names. Exits
# with the suite's status.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: [MCS_LAB_STACKS=S1,S2,S3] $0 MCS_API_CHECKOUT [GINKGO_LABEL_FILTER]" >&2; exit 2; }
checkout=$(cd "$1" && pwd)
filter=${2:-}
export MCS_LAB_STACKS=${MCS_LAB_STACKS:-dual-stack}
cd "$(dirname "$0")/../.."
for p in sh socat nc nslookup; do
	command -v "$p" >/dev/null || { echo "$p not found: apt-get install socat netcat-openbsd bind9-dnsutils" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/mcs-conformance.XXXXXX")
mkdir -p "$work/kube" "$work/in" "$work/repo"
pids=()
# Stopping the loop and the lab is not the suite's result: a program that
# exits non-zero on SIGTERM must not turn a passing run into a failure.
cleanup() {
	rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	echo "logs in $work"
	exit "$rc"
}
trap cleanup EXIT

echo "==> building mcs-gitops, the members program and the suite"
go build -o "$work/mcs-gitops" ./cmd/mcs-gitops
go build -o "$work/members" ./test/demo/members
go build -o "$work/spectable" ./test/conformance/spectable
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

echo "==> starting the lab (members: $MCS_LAB_STACKS)"
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
	"$work/conformance.test" --contexts=cluster-1,cluster-2,cluster-3 -ginkgo.label-filter="$filter" -ginkgo.v -ginkgo.timeout=30m \
	-ginkgo.json-report=report.json >"$work/suite.log" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$work/suite.log" | grep -E '^(Ran |PASS|FAIL)|\[FAILED\]' | tail -20
"$work/spectable" --stacks "$MCS_LAB_STACKS" report.json | tee table.md
exit "$rc"
