// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// InputFiles lays a member's formatted snapshot out as files, one per
// part (snapshot.SplitParts): inputs/<member>/cluster.yaml and
// inputs/<member>/<namespace>/<service>.yaml. One file for the whole
// snapshot made every endpoint that moved rewrite it, 437 KB at 300
// services, about 20 KB pushed per commit once compressed; a part is a
// service's objects.
func InputFiles(member string, formatted []byte) (map[string][]byte, error) {
	parts, err := snapshot.SplitParts(formatted)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", member, err)
	}
	files := make(map[string][]byte, len(parts))
	for _, p := range parts {
		files[InputDir(member)+p.Name+".yaml"] = p.Data
	}
	return files, nil
}

// JoinInputs is each member's formatted snapshot from the files of a
// tree (keys relative to the tree): its parts joined in order, or the one
// file a tree from before the split holds (InputSources orders them).
func JoinInputs(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for m, srcs := range InputSources(files, "") {
		var joined []byte
		for _, src := range srcs {
			joined = append(joined, src.Data...)
		}
		out[m] = joined
	}
	return out
}

// InputSources are each member's snapshot files of a tree (keys relative
// to the tree), in the order their parts join (the one file of a tree from
// before the split, then the parts), each named prefix + its path: what
// snapshot.ParseStrictSources reads, so an error names the file.
func InputSources(files map[string][]byte, prefix string) map[string][]snapshot.Source {
	type part struct {
		name string
		src  snapshot.Source
	}
	parts := map[string][]part{}
	for p, b := range files {
		m, ok := InputMember(p)
		if !ok {
			continue
		}
		name, split := strings.CutPrefix(p, InputDir(m))
		if !split {
			name = "" // before every part
		}
		parts[m] = append(parts[m], part{strings.TrimSuffix(name, ".yaml"), snapshot.Source{File: prefix + p, Data: b}})
	}
	out := make(map[string][]snapshot.Source, len(parts))
	for m, ps := range parts {
		slices.SortFunc(ps, func(a, b part) int {
			switch {
			case a.name == "":
				return -1
			case b.name == "":
				return 1
			}
			return snapshot.ComparePartNames(a.name, b.name)
		})
		for _, p := range ps {
			out[m] = append(out[m], p.src)
		}
	}
	return out
}
