// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// typeMeta is what the allow-list check reads from each document.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// checkFile checks every YAML document of one manifest file against the
// allow-list; the error names the file, the document and the kind.
func checkFile(name string, data []byte) error {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var node yamlv3.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if len(node.Content) == 0 || node.Content[0].Tag == "!!null" {
			continue // empty document
		}
		doc, err := yamlv3.Marshal(&node)
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		var tm typeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if err := contract.CheckKind(tm.APIVersion, tm.Kind, tm.Metadata.Namespace); err != nil {
			return fmt.Errorf("%s: document %d (%s %q): %w", name, i, tm.Kind, tm.Metadata.Name, err)
		}
	}
}

// kustomizationFields are the only fields a member's kustomization.yaml
// may use: the renderer writes nothing else, and generators, patches,
// remote bases, helm charts or plugins would let a commit produce objects
// (or run programs) the allow-list never saw.
var kustomizationFields = map[string]bool{"apiVersion": true, "kind": true, "resources": true}

// parseKustomization is the resources the member's kustomization.yaml
// lists, refusing any field but apiVersion, kind and resources. It depends
// on the bytes alone (a BuildCache keeps it); checkResources then checks
// the resources against the files.
func parseKustomization(name string, data []byte) ([]string, error) {
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var fields []string
	for f := range k {
		if !kustomizationFields[f] {
			fields = append(fields, f)
		}
	}
	if len(fields) > 0 {
		slices.Sort(fields)
		return nil, fmt.Errorf("%s: field(s) %s not allowed (only apiVersion, kind, resources)", name, strings.Join(fields, ", "))
	}
	if kind, _ := k["kind"].(string); kind != "" && kind != "Kustomization" {
		return nil, fmt.Errorf("%s: kind %q, want Kustomization", name, kind)
	}
	res, ok := k["resources"].([]any)
	if !ok && k["resources"] != nil {
		return nil, fmt.Errorf("%s: resources is not a list", name)
	}
	resources := make([]string, 0, len(res))
	for _, r := range res {
		s, ok := r.(string)
		if !ok {
			return nil, fmt.Errorf("%s: resource %v is not a string", name, r)
		}
		resources = append(resources, s)
	}
	return resources, nil
}

// checkResources refuses a kustomization whose resources are not all
// files inside the member directory.
func checkResources(name string, resources []string, exists func(rel string) bool) error {
	for _, r := range resources {
		if !exists(r) {
			return fmt.Errorf("%s: resource %q is not a file in the member directory", name, r)
		}
	}
	return nil
}
