// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
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
// tree (keys relative to the tree): its parts joined, or the one file a
// tree from before the split holds.
func JoinInputs(files map[string][]byte) map[string][]byte {
	parts := map[string][]snapshot.Part{}
	out := map[string][]byte{}
	for p, b := range files {
		m, ok := InputMember(p)
		if !ok {
			continue
		}
		name, split := strings.CutPrefix(p, InputDir(m))
		if !split {
			out[m] = b
			continue
		}
		parts[m] = append(parts[m], snapshot.Part{Name: strings.TrimSuffix(name, ".yaml"), Data: b})
	}
	for m, ps := range parts {
		out[m] = append(out[m], snapshot.JoinParts(ps)...)
	}
	return out
}
