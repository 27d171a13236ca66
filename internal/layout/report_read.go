// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// ParseServiceReport reads one status/<namespace>/<name>.yaml file back
// into the ServiceReport it was rendered from. The generated-file comment
// is ignored; unknown fields are tolerated so an older reader can read a
// newer tree.
func ParseServiceReport(data []byte) (*render.ServiceReport, error) {
	var s render.ServiceReport
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
func ReadReport(files map[string][]byte) (*render.Report, error) {
	return readReport(files)
}

// readReport is ReadReport taking each service's report from known
// instead, when known has it.
func readReport(files map[string][]byte) (*render.Report, error) {
	gws, err := readGateways(files)
	if err != nil {
		return nil, err
	}
	r := &render.Report{Services: []render.ServiceReport{}, Gateways: gws}
	for p, data := range files {
		ns, name, ok := serviceStatus(p)
		if !ok {
			continue
		}
		s, err := serviceReportAt(p, data, ns, name)
		if err != nil {
			return nil, err
		}
		r.Services = append(r.Services, *s)
	}
	sortServices(r.Services)
	return r, nil
}

// sortServices orders reports as a render does: by namespace, then name.
func sortServices(s []render.ServiceReport) {
	sort.Slice(s, func(i, j int) bool {
		a, b := s[i], s[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// ReadAllocations reads the TCP port allocations back from a rendered
// tree's status/gateways.yaml (keys as Files returns them); nil when the
// tree has none, as before the first render of a gateway.
func ReadAllocations(files map[string][]byte) (render.Allocations, error) {
	gws, err := readGateways(files)
	if err != nil {
		return nil, err
	}
	return (&render.Report{Gateways: gws}).Allocations(), nil
}

// readGateways parses status/gateways.yaml; nil when the tree has none.
func readGateways(files map[string][]byte) ([]render.GatewayReport, error) {
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

// serviceReportAt parses the report at path p, which must be ns/name's.
func serviceReportAt(p string, data []byte, ns, name string) (*render.ServiceReport, error) {
	s, err := ParseServiceReport(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if s.Namespace != ns || s.Name != name {
		return nil, fmt.Errorf("%s: holds the report of %s/%s", p, s.Namespace, s.Name)
	}
	return s, nil
}
