// Package apply will own getting what Git holds into the member clusters:
// kustomize build per member directory, the allow-list of kinds, Flux ssa
// apply and pruning of what mcs-gitops owns, and status write-back. It is
// empty until the live-loop work lands; see docs/architecture.md.
package apply
