package render

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ParseServiceReport reads one status/<namespace>/<name>.yaml file back
// into the ServiceReport it was rendered from. The generated-file comment
// is ignored; unknown fields are tolerated so an older reader can read a
// newer tree.
func ParseServiceReport(data []byte) (*ServiceReport, error) {
	var s ServiceReport
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Namespace == "" || s.Name == "" {
		return nil, fmt.Errorf("namespace and name are required")
	}
	return &s, nil
}

// ReadReport rebuilds the Report from a rendered tree's status files
// (keys relative to the repository sub-path, as Files returns them).
// Files other than status/<namespace>/<name>.yaml are ignored, so a whole
// commit's tree can be passed. Warnings are not stored per file and come
// back empty; Gateways come from status/gateways.yaml.
func ReadReport(files map[string][]byte) (*Report, error) {
	gws, err := readGateways(files)
	if err != nil {
		return nil, err
	}
	r := &Report{Services: []ServiceReport{}, Gateways: gws}
	for p, data := range files {
		ns, name, ok := statusFile(p)
		if !ok {
			continue
		}
		s, err := ParseServiceReport(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if s.Namespace != ns || s.Name != name {
			return nil, fmt.Errorf("%s: holds the report of %s/%s", p, s.Namespace, s.Name)
		}
		r.Services = append(r.Services, *s)
	}
	sort.Slice(r.Services, func(i, j int) bool {
		a, b := r.Services[i], r.Services[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return r, nil
}

// statusFile splits status/<namespace>/<name>.yaml.
func statusFile(p string) (ns, name string, ok bool) {
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

// ReadAllocations reads the TCP port allocations back from a rendered
// tree's status/gateways.yaml (keys as Files returns them); nil when the
// tree has none, as before the first render of a gateway.
func ReadAllocations(files map[string][]byte) (Allocations, error) {
	gws, err := readGateways(files)
	if err != nil {
		return nil, err
	}
	return (&Report{Gateways: gws}).Allocations(), nil
}

// Allocations are the TCP port allocations of the report's gateways, by
// member; nil when it has no gateway.
func (r *Report) Allocations() Allocations {
	if len(r.Gateways) == 0 {
		return nil
	}
	out := Allocations{}
	for _, g := range r.Gateways {
		out[g.Member] = g.Allocations
	}
	return out
}

// readGateways parses status/gateways.yaml; nil when the tree has none.
func readGateways(files map[string][]byte) ([]GatewayReport, error) {
	data, ok := files[GatewaysFile]
	if !ok {
		return nil, nil
	}
	var doc gatewaysDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", GatewaysFile, err)
	}
	for _, g := range doc.Gateways {
		if g.Member == "" {
			return nil, fmt.Errorf("%s: a gateway without a member", GatewaysFile)
		}
	}
	return doc.Gateways, nil
}
