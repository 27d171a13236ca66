package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Top-level directories of the rendered repository that the renderer owns
// entirely: anything in them it did not render this time is stale.
const (
	ClustersDir = "clusters"
	StatusDir   = "status"
)

// Files lays the output out as the rendered repository: one file per object
// under clusters/<member>/, a kustomization.yaml per member listing them,
// and the report under status/. Keys are slash-separated paths; the bytes
// are identical for identical input.
func Files(out *Output) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, m := range out.Members {
		resources := make([]string, 0, len(m.Objects))
		for _, o := range m.Objects {
			b, err := Marshal(o.Object)
			if err != nil {
				return nil, fmt.Errorf("member %q: %s: %w", m.Name, o.Path, err)
			}
			files[ClustersDir+"/"+m.Name+"/"+o.Path] = b
			resources = append(resources, o.Path)
		}
		k, err := yaml.Marshal(map[string]any{
			"apiVersion": "kustomize.config.k8s.io/v1beta1",
			"kind":       "Kustomization",
			"resources":  resources,
		})
		if err != nil {
			return nil, fmt.Errorf("member %q: kustomization.yaml: %w", m.Name, err)
		}
		files[ClustersDir+"/"+m.Name+"/kustomization.yaml"] = append([]byte(generatedHeader), k...)
	}
	for _, s := range out.Report.Services {
		b, err := yaml.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("status of %s/%s: %w", s.Namespace, s.Name, err)
		}
		files[StatusDir+"/"+s.Namespace+"/"+s.Name+".yaml"] = append([]byte(generatedHeader), b...)
	}
	files[StatusDir+"/SUMMARY.md"] = []byte(Summary(&out.Report))
	return files, nil
}

const generatedHeader = "# Rendered by mcs-gitops; edits are overwritten.\n"

// Marshal serializes an object as YAML with sorted keys, without the
// fields a typed Go object always carries but that mean nothing in Git
// (creationTimestamp: null, an empty status).
func Marshal(obj any) ([]byte, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if md["creationTimestamp"] == nil {
			delete(md, "creationTimestamp")
		}
	}
	if st, ok := m["status"].(map[string]any); ok && isEmpty(st) {
		delete(m, "status")
	}
	return yaml.Marshal(m)
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	}
	return false
}

// Summary is status/SUMMARY.md: the report for a person reviewing a commit.
func Summary(r *Report) string {
	var b strings.Builder
	b.WriteString("# Multi-cluster services\n\n")
	b.WriteString("Rendered by mcs-gitops; edits are overwritten.\n\n")
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", w)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
	var problems []string
	b.WriteString("| service | type | exported by | imported by | ready endpoints |\n|---|---|---|---|---|\n")
	for _, s := range r.Services {
		var exporters []string
		for _, e := range s.Exports {
			mark := ""
			if c, ok := e.Condition("Valid"); ok && c.Status != "True" {
				mark = " (invalid)"
				problems = append(problems, fmt.Sprintf("%s/%s from %s: %s: %s", s.Namespace, s.Name, e.Member, c.Reason, c.Message))
			} else if c, ok := e.Condition("Conflict"); ok && c.Status == "True" {
				mark = " (conflict)"
				problems = append(problems, fmt.Sprintf("%s/%s from %s: %s: %s", s.Namespace, s.Name, e.Member, c.Reason, c.Message))
			}
			exporters = append(exporters, e.Member+mark)
		}
		for _, m := range s.MissingNamespace {
			problems = append(problems, fmt.Sprintf("%s/%s: namespace %s does not exist in %s", s.Namespace, s.Name, s.Namespace, m))
		}
		members := make([]string, 0, len(s.Endpoints))
		for m := range s.Endpoints {
			members = append(members, m)
		}
		sort.Strings(members)
		var eps []string
		for _, m := range members {
			eps = append(eps, fmt.Sprintf("%s: %d", m, s.Endpoints[m]))
		}
		typ := s.Type
		if typ == "" {
			typ = "not imported"
		}
		fmt.Fprintf(&b, "| %s/%s | %s | %s | %s | %s |\n", s.Namespace, s.Name, typ,
			strings.Join(exporters, ", "), strings.Join(s.ImportedBy, ", "), strings.Join(eps, ", "))
	}
	if len(problems) > 0 {
		b.WriteString("\n## Problems\n\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}
