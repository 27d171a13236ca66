package apply

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// ReadReport rebuilds the render report from the status/<ns>/<svc>.yaml
// files of a commit (keys relative to the repository sub-path), sorted by
// namespace and name as the renderer sorts it. Other files under status/
// (SUMMARY.md, members.yaml) are not service reports and are ignored.
func ReadReport(files map[string][]byte) (*render.Report, error) {
	rep := &render.Report{Services: []render.ServiceReport{}}
	prefix := render.StatusDir + "/"
	for p, data := range files {
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok || !strings.HasSuffix(rel, ".yaml") || strings.Count(rel, "/") != 1 {
			continue
		}
		var s render.ServiceReport
		if err := yaml.UnmarshalStrict(stripComments(data), &s); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		ns, name, _ := strings.Cut(strings.TrimSuffix(rel, ".yaml"), "/")
		if s.Namespace != ns || s.Name != name {
			return nil, fmt.Errorf("%s: holds the report of %s/%s", p, s.Namespace, s.Name)
		}
		rep.Services = append(rep.Services, s)
	}
	slices.SortFunc(rep.Services, func(a, b render.ServiceReport) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return rep, nil
}

// stripComments drops leading comment lines (the "# Rendered by" header).
func stripComments(data []byte) []byte {
	for bytes.HasPrefix(data, []byte("#")) {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil
		}
		data = data[i+1:]
	}
	return data
}
