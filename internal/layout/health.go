// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

const healthHeader = "# Written by mcs-gitops: reachability of each member cluster. unreachableSince is\n" +
	"# when reading it first failed; the error itself is in the loop's log.\n"

type healthDoc struct {
	Members []snapshot.Health `json:"members"`
}

// FormatHealth renders status/members.yaml: a comment, then the members in
// the given order. Same input, same bytes.
func FormatHealth(h []snapshot.Health) ([]byte, error) {
	if h == nil {
		h = []snapshot.Health{}
	}
	b, err := yaml.Marshal(healthDoc{Members: h})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", HealthFile, err)
	}
	return append([]byte(healthHeader), b...), nil
}

// ParseHealth reads status/members.yaml back, by member name. Empty
// data gives an empty map (no file committed yet).
func ParseHealth(data []byte) (map[string]snapshot.Health, error) {
	out := map[string]snapshot.Health{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	var doc healthDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", HealthFile, err)
	}
	for i, h := range doc.Members {
		if h.Member == "" {
			return nil, fmt.Errorf("%s: members[%d]: member is empty", HealthFile, i)
		}
		if _, dup := out[h.Member]; dup {
			return nil, fmt.Errorf("%s: member %q appears twice", HealthFile, h.Member)
		}
		out[h.Member] = h
	}
	return out, nil
}
