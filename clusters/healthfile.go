package clusters

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"
)

// HealthFileName is where HealthFile's output lives in the rendered tree.
const HealthFileName = "status/members.yaml"

const healthHeader = "# Written by mcs-gitops: reachability of each member cluster. unreachableSince is\n" +
	"# when reading it first failed; the error itself is in the loop's log.\n"

type healthDoc struct {
	Members []Health `json:"members"`
}

// HealthFile renders status/members.yaml: a comment, then the members in
// the given order. Same input, same bytes.
func HealthFile(h []Health) ([]byte, error) {
	if h == nil {
		h = []Health{}
	}
	b, err := yaml.Marshal(healthDoc{Members: h})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", HealthFileName, err)
	}
	return append([]byte(healthHeader), b...), nil
}

// ParseHealthFile reads status/members.yaml back, by member name. Empty
// data gives an empty map (no file committed yet).
func ParseHealthFile(data []byte) (map[string]Health, error) {
	out := map[string]Health{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	var doc healthDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", HealthFileName, err)
	}
	for i, h := range doc.Members {
		if h.Member == "" {
			return nil, fmt.Errorf("%s: members[%d]: member is empty", HealthFileName, i)
		}
		if _, dup := out[h.Member]; dup {
			return nil, fmt.Errorf("%s: member %q appears twice", HealthFileName, h.Member)
		}
		out[h.Member] = h
	}
	return out, nil
}
