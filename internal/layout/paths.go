// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"path"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// The rendered repository, relative to the configured sub-path:
//
//	clusterset.yaml                  the config, committed verbatim
//	inputs/<member>.yaml             each member's snapshot (clusters/snapshot format)
//	clusters/<member>/...            one file per object and a kustomization.yaml
//	status/<namespace>/<name>.yaml   the report of one exported service
//	status/gateways.yaml             what each gateway serves, TCP port allocations
//	status/members.yaml              each member's reachability
//	status/review.yaml               review mode: held imports, proposals, rejections
//	status/rollouts.yaml             staged rollouts in progress (spec.rollout)
//	status/inventory.yaml            the members the cluster inventory gives (spec.inventory)
//	status/SUMMARY.md                the report for a person
const (
	ConfigFile  = "clusterset.yaml"
	InputsDir   = "inputs"
	ClustersDir = "clusters"
	StatusDir   = "status"
	// GatewaysFile, HealthFile and ReviewFile sit beside the namespace
	// directories of status/; no namespace can be called gateways.yaml,
	// members.yaml or review.yaml (a namespace name has no dot).
	GatewaysFile = StatusDir + "/gateways.yaml"
	HealthFile   = StatusDir + "/members.yaml"
	// ReviewFile is written only in review mode.
	ReviewFile  = StatusDir + "/review.yaml"
	SummaryFile = StatusDir + "/SUMMARY.md"
	// RolloutsFile is written only while a staged rollout is in
	// progress; a person may set a rollout's request in it.
	RolloutsFile = StatusDir + "/rollouts.yaml"
	// InventoryFile is written only with spec.inventory.
	InventoryFile = StatusDir + "/inventory.yaml"
)

// RenderRoots are what `render` owns under --out: anything in them it did
// not render this time is stale.
var RenderRoots = []string{ClustersDir, StatusDir}

// Roots are what each commit of the loop makes hold exactly the rendered
// tree; anything else in the repository (a README, CI config) is left
// alone. Callers must not modify it.
var Roots = []string{ConfigFile, InputsDir, ClustersDir, StatusDir}

// InputFile is where a member's snapshot was committed as one file
// before it was split (InputFiles); it still names the snapshot in
// messages and reads back (JoinInputs).
func InputFile(member string) string { return InputsDir + "/" + member + ".yaml" }

// InputDir is the directory of a member's snapshot, one file per part of
// it (InputFiles), with a trailing slash.
func InputDir(member string) string { return InputsDir + "/" + member + "/" }

// MemberDir is the directory of member's objects, with a trailing slash.
func MemberDir(member string) string { return ClustersDir + "/" + member + "/" }

// ServiceStatusFile is where the report of namespace/name is committed.
func ServiceStatusFile(namespace, name string) string {
	return StatusDir + "/" + namespace + "/" + name + ".yaml"
}

// InputMember is the member whose snapshot p (relative to the tree) is,
// or is a part of, if p is one: inputs/<member>.yaml, or
// inputs/<member>/<part>.yaml.
func InputMember(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, InputsDir+"/")
	if !ok {
		return "", false
	}
	if member, part, nested := strings.Cut(rest, "/"); nested {
		return member, member != "" && strings.HasSuffix(part, ".yaml")
	}
	return strings.CutSuffix(rest, ".yaml")
}

// serviceStatus splits status/<namespace>/<name>.yaml.
func serviceStatus(p string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(p, StatusDir+"/")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 2 || !strings.HasSuffix(parts[1], ".yaml") {
		return "", "", false
	}
	name = strings.TrimSuffix(parts[1], ".yaml")
	if parts[0] == "" || name == "" {
		return "", "", false
	}
	return parts[0], name, true
}

// importOf is the member and namespace/name of the import a file under
// clusters/<member>/<namespace>/<name>/ belongs to.
func importOf(p string) (member, key string, ok bool) {
	rest, ok := strings.CutPrefix(p, ClustersDir+"/")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 4 {
		return "", "", false
	}
	return parts[0], path.Join(parts[1], parts[2]), true
}

// ImportFile is the name of the ServiceImport's file in its directory
// clusters/<member>/<namespace>/<name>/.
const ImportFile = "serviceimport.yaml"

// ImportsIn lists the imports a tree's paths hold: each
// clusters/<member>/<namespace>/<name>/serviceimport.yaml. Review mode reads
// the imports a merged branch really has from it, so that one a person
// removed in a proposal is seen as removed.
func ImportsIn(paths []string) map[render.ImportKey]bool {
	out := map[render.ImportKey]bool{}
	for _, p := range paths {
		rest, ok := strings.CutPrefix(p, ClustersDir+"/")
		if !ok {
			continue
		}
		parts := strings.Split(rest, "/")
		if len(parts) == 4 && parts[3] == ImportFile {
			out[render.ImportKey{Member: parts[0], Namespace: parts[1], Name: parts[2]}] = true
		}
	}
	return out
}
