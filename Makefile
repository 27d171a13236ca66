# mcs-gitops developer and CI entry points. `make` alone lists the targets.
#
# Overridable: GO, TESTBIN (where kube-apiserver, etcd, CoreDNS, kube-controller-manager, kube-proxy, Traefik and Gitea are built; defaults to
# $MCS_GITOPS_TESTBIN, else ~/.cache/mcs-gitops/testbin), FUZZTIME, BENCH_OUT;
# for `make image`: VERSION, IMAGE, IMAGE_ARCH, IMAGE_OUT, CA_CERTS (below);
# for `make release`: VERSION, COSIGN_KEY (and COSIGN_PASSWORD in the environment), RELEASE_OUT,
# RELEASE_PLATFORMS, CA_CERTS.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

GO ?= go
TESTBIN ?= $(or $(MCS_GITOPS_TESTBIN),$(HOME)/.cache/mcs-gitops/testbin)
# go test runs each package in its own directory, so a relative path would
# point somewhere else for every package.
override TESTBIN := $(abspath $(TESTBIN))
FUZZTIME ?= 30s
BENCH_OUT ?= $(or $(TMPDIR),/tmp)/mcs-gitops-bench.txt
# The oldest Kubernetes supported (docs/compatibility.md): make testbin builds
# its kube-apiserver beside the current one, and make test runs the e2e core
# (E2E_CORE) against it too.
K8S_OLDEST_VERSION ?= 1.33.13
OLDEST_APISERVER := kube-apiserver-$(basename $(K8S_OLDEST_VERSION))
E2E_CORE := ^(TestAPIServerVersion|TestSyncLifecycle|TestSyncWithMemberDown|TestOneRefusedObjectDoesNotStopTheMember|TestUnloadableObjectIsReportedNotFatal|TestMixedIPFamilyFleet|TestJoinDoctorSync|TestDoctorFindsEachFault|TestSyncRunsWithOnlyTheMemberRole|TestDeployManifests|TestChartInstall)$$
# Generous: every package that touches a cluster starts real apiservers, and
# packages run in parallel on however few cores CI has.
TEST_TIMEOUT ?= 30m
# The version the binary and the image say they are; the image's tag.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
IMAGE ?= mcs-gitops:$(VERSION)
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
IMAGE_OUT ?= _output/image/linux-$(IMAGE_ARCH)
# The CAs the image trusts: the build machine's (Debian package ca-certificates).
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt

# make release: the cosign private key to sign with (its password in
# COSIGN_PASSWORD); empty makes a local pair in _output/release/ (docs/releasing.md).
COSIGN_KEY ?=
RELEASE_OUT ?= _output/release/$(VERSION)
RELEASE_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64
# build/release is its own module (cosign and the SBOM generator stay out
# of the product's go.mod); make test vets and tests it too.
RELEASE_MODULE := build/release

.PHONY: help testbin test test-faults bench fuzz demo demo-offline generate image release clean-testbin

help: ## list the targets
	@echo 'usage: make [target] [GO=$(GO)] [TESTBIN=$(TESTBIN)] [FUZZTIME=$(FUZZTIME)]'
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

testbin: ## build kube-apiserver (the current and the oldest supported), etcd, coredns, kube-controller-manager, kube-proxy, traefik and gitea into TESTBIN (once; a no-op when cached), install nftables for the lab, Node and Mermaid's parser for the diagram checks, Chromium, playwright-core and Gitea's web frontend for the browser check
	@test -n '$(TESTBIN)' || { echo 'TESTBIN is empty' >&2; exit 1; }
	@test -x '$(TESTBIN)/kube-apiserver' -a -x '$(TESTBIN)/$(OLDEST_APISERVER)' -a -x '$(TESTBIN)/etcd' -a -x '$(TESTBIN)/coredns' -a -x '$(TESTBIN)/kube-controller-manager' -a -x '$(TESTBIN)/kube-proxy' -a -x '$(TESTBIN)/traefik' -a -x '$(TESTBIN)/gitea/gitea' || \
		echo 'make: first run: building kube-apiserver, etcd, coredns, kube-controller-manager, kube-proxy, traefik and gitea from source into $(TESTBIN) (~21 min on 2 cores, two at a time, once per machine); this is why it is slow.'
	@K8S_OLDEST_VERSION='$(K8S_OLDEST_VERSION)' bash test/testbin/build.sh '$(TESTBIN)' >/dev/null
	@bash test/testbin/hosttools.sh
	@bash test/testbin/mermaid.sh '$(TESTBIN)'
	@bash test/testbin/browser.sh '$(TESTBIN)'

test: testbin ## gofmt and go vet, then all tests (real kube-apiservers; needs testbin)
	@echo 'make test: tests start real kube-apiservers from $(TESTBIN) (several seconds per test that needs clusters).'
	@unformatted=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted (run gofmt -w on them):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd $(RELEASE_MODULE) && $(GO) vet ./...
	KUBEBUILDER_ASSETS='$(TESTBIN)' $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT)
	@echo 'make test: the e2e core again, against the oldest supported kube-apiserver ($(OLDEST_APISERVER), v$(K8S_OLDEST_VERSION))'
	KUBEBUILDER_ASSETS='$(TESTBIN)' MCS_KUBE_APISERVER='$(OLDEST_APISERVER)' $(GO) test ./test/e2e -count=1 -timeout $(TEST_TIMEOUT) -run '$(E2E_CORE)'
	cd $(RELEASE_MODULE) && $(GO) test ./... -count=1 -timeout $(TEST_TIMEOUT)

test-faults: testbin ## the fault tests at length: 40 kills of the controller under churn (make test runs 8), a leader SIGSTOPped past its Lease
	KUBEBUILDER_ASSETS='$(TESTBIN)' MCS_CRASH_KILLS=40 MCS_FAULTS=1 $(GO) test ./test/e2e -run 'TestCrashConsistency|TestSlowMember|TestPausedLeader' -count=1 -v -timeout 30m

bench: ## run every benchmark 6 times (the real-apiserver ones take most of an hour); raw results go to BENCH_OUT
	KUBEBUILDER_ASSETS='$(TESTBIN)' $(GO) test ./... -run '^$$' -bench . -benchmem -count 6 -timeout 0 | tee '$(BENCH_OUT)'
	@echo 'benchmark results: $(BENCH_OUT)'

fuzz: ## run each Fuzz* target for FUZZTIME (default 30s; no test timeout, which would kill a target whose setup plus FUZZTIME passes 10m)
	@targets=$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ {n[c++] = $$1; next} /^ok/ {for (i = 0; i < c; i++) print $$2 " " n[i]; c = 0}'); \
	if [ -z "$$targets" ]; then echo 'no Fuzz targets found'; exit 0; fi; \
	while read -r pkg name; do \
		echo "fuzzing $$pkg $$name for $(FUZZTIME)"; \
		KUBEBUILDER_ASSETS='$(TESTBIN)' $(GO) test "$$pkg" -run '^$$' -fuzz "^$$name\$$" -fuzztime '$(FUZZTIME)' -timeout 0 </dev/null; \
	done <<<"$$targets"

demo: testbin ## the loop on three local clusters: start them, sync into a new Git repo, show the commit and imports
	KUBEBUILDER_ASSETS='$(TESTBIN)' bash fixtures/demo/run.sh

demo-offline: ## render the committed demo snapshot offline, no clusters (fixtures/demo/offline.sh)
	bash fixtures/demo/offline.sh

generate: ## go generate ./...
	$(GO) generate ./...

image: ## build the image IMAGE (mcs-gitops:<git describe>) for linux/IMAGE_ARCH without a container engine: an OCI layout and a docker load tarball in IMAGE_OUT
	@test -n '$(VERSION)' || { echo 'make image: no version (not a Git checkout?): set VERSION=... and SOURCE_DATE_EPOCH=...' >&2; exit 1; }
	CGO_ENABLED=0 GOOS=linux GOARCH='$(IMAGE_ARCH)' $(GO) build -trimpath -buildvcs=auto \
		-ldflags '-s -w -X github.com/mcs-gitops/mcs-gitops/internal/buildinfo.version=$(VERSION)' \
		-o '$(IMAGE_OUT)/mcs-gitops' ./cmd/mcs-gitops
	$(GO) run ./build/image --binary '$(IMAGE_OUT)/mcs-gitops' --version '$(VERSION)' --image '$(IMAGE)' \
		--ca-certs '$(CA_CERTS)' --out '$(IMAGE_OUT)'

release: ## write a signed release into RELEASE_OUT: binaries for RELEASE_PLATFORMS, SBOMs, the multi-arch image, provenance, checksums (make release VERSION=vX.Y.Z [COSIGN_KEY=cosign.key]; docs/releasing.md)
	@[[ '$(VERSION)' =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$ ]] || { echo 'make release: VERSION=$(VERSION) is not a release version: make release VERSION=vX.Y.Z' >&2; exit 1; }
	cd $(RELEASE_MODULE) && $(GO) run . --version '$(VERSION)' --source '$(CURDIR)' --out '$(abspath $(RELEASE_OUT))' \
		--key '$(if $(COSIGN_KEY),$(abspath $(COSIGN_KEY)))' --ca-certs '$(CA_CERTS)' --platforms '$(RELEASE_PLATFORMS)'

clean-testbin: ## delete TESTBIN; the next `make test` rebuilds it
	@test -n '$(TESTBIN)' && test '$(TESTBIN)' != / || { echo 'refusing to delete TESTBIN=$(TESTBIN)' >&2; exit 1; }
	rm -rf '$(TESTBIN)'
